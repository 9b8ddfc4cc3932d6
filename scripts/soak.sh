#!/usr/bin/env bash
# make soak: issue 41's soak. `gpucanary watch --json` over 100
# environments while real pip flips torch in 5 of them, each as often as
# pip allows and at most once a second, for 10 minutes: every flip must be
# reported, and the engine's RSS at the end must be within 10 MB of its
# RSS after the first 2 minutes. The settings are the environment's
# (GPUCANARY_SOAK_DURATION=90s GPUCANARY_SOAK_BASELINE=30s for a short
# run; see scripts/soak/soak_test.go). Not in make test: it takes 12
# minutes, most of them waiting.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -trimpath -tags nogui -o bin/gpucanary-soak ./cmd/gpucanary
echo "== History writes per event, by history length (goal: the same bytes written at any length)"
go test -run '^$' -bench 'BenchmarkAppend' -benchtime 200x ./monitor/store/ 2>&1 | grep -E '^Benchmark' || true
echo
echo "== watch over ${GPUCANARY_SOAK_ENVS:-100} environments, pip flipping torch in ${GPUCANARY_SOAK_FLIPPED:-5}, for ${GPUCANARY_SOAK_DURATION:-10m}"
GPUCANARY_SOAK_BIN="$PWD/bin/gpucanary-soak" go test -count=1 -v -timeout 60m -run '^TestSoak$' ./scripts/soak/
