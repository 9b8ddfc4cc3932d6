#!/usr/bin/env bash
# Runs every fuzz target in the module briefly, one at a time as
# `go test -fuzz` requires.
#
# The budget is a count of executions (FUZZTIME, default 50000x), not a
# duration: with a duration, Go's fuzz coordinator up to 1.26 can report
# "context deadline exceeded" and fail a target that found nothing, when the
# deadline lands while a worker is mid-call on a loaded machine
# (https://go.dev/issue/75804, fixed in Go 1.27). A count has no deadline to
# race. A duration still works (FUZZTIME=30s make fuzz) for longer local runs.
set -euo pipefail
fuzztime=${FUZZTIME:-50000x}
n=0
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/gpucanary-fuzz.log 2>&1 || { cat /tmp/gpucanary-fuzz.log; exit 1; }
    n=$((n+1))
  done
done
echo "fuzz: $n targets ran for $fuzztime each"
