#!/usr/bin/env bash
# The Prometheus side of make test: promtool checks the shipped rules and
# the example configuration and runs the rules' unit tests
# (deploy/prometheus/*_test.yml); then Debian's real prometheus scrapes a
# real `gpucanary agent` on loopback while real pip overwrites a CUDA torch
# (deploy/prometheus/e2e). make deps-test installs prometheus and promtool.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in promtool prometheus; do
  command -v "$tool" >/dev/null || { echo "test-prom: $tool is missing (make deps-test installs Debian's prometheus)"; exit 1; }
done

promtool check rules deploy/prometheus/gpucanary.rules.yml
promtool test rules deploy/prometheus/*_test.yml
promtool check config deploy/prometheus/prometheus.example.yml
if command -v systemd-analyze >/dev/null; then
  # The unit names /usr/local/bin/gpucanary-cli; verify a copy that names this build.
  unit=$(mktemp -d)/gpucanary-agent.service
  sed "s|/usr/local/bin/gpucanary-cli|$PWD/bin/gpucanary-cli|" deploy/systemd/gpucanary-agent.service >"$unit"
fi

mkdir -p bin
# As make cli builds it: the CLI serves the metrics itself.
go build -trimpath -tags nogui -o bin/gpucanary-cli ./cmd/gpucanary
if [ -n "${unit:-}" ]; then
  out=$(systemd-analyze verify "$unit" 2>&1 || true)
  if grep -i "gpucanary-agent.service" <<<"$out" | grep -v "Failed to connect" | grep -q .; then
    echo "$out"; echo "test-prom: systemd-analyze finds fault with deploy/systemd/gpucanary-agent.service"; exit 1
  fi
  rm -rf "$(dirname "$unit")"
fi
go test -c -tags e2e -o bin/prom-e2e.test ./deploy/prometheus/e2e
log=$(mktemp)
rc=0
(cd deploy/prometheus/e2e && GPUCANARY_CLI=$PWD/../../../bin/gpucanary-cli ../../../bin/prom-e2e.test -test.v -test.timeout 5m) >"$log" 2>&1 || rc=$?
grep -E '^(=== RUN|--- |PASS|FAIL|ok )|prometheus_test.go' "$log" || true
if [ $rc -ne 0 ]; then cat "$log"; rm -f "$log"; exit $rc; fi
if grep -q -- '--- SKIP' "$log"; then echo "test-prom: the end-to-end test was skipped (python3-venv and python3-pip are needed)"; rm -f "$log"; exit 1; fi
rm -f "$log"
