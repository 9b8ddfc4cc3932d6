#!/usr/bin/env bash
# The agent's scrape cost, beside node_exporter's own scrape of the same host
# (the peer: the exporter every Prometheus host already runs). Part of
# make bench; docs/performance.md's figures come from here.
#   1. BenchmarkScrape: one /metrics scrape of a machine with 100
#      environments and 1000 ML processes, in process (goal < 5 ms).
#   2. Real HTTP scrapes of a running `gpucanary agent` (this host's
#      environments, a simulated A100) and of prometheus-node-exporter with
#      its default collectors, timed the same way with curl: the median of
#      ${SCRAPES:-50}.
#   3. The agent's own CPU over ${GPUCANARY_IDLE_SECONDS:-30} s of an idle
#      machine, unscraped and then scraped every second.
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=C.UTF-8
for tool in prometheus-node-exporter curl; do
  command -v "$tool" >/dev/null || { echo "bench-prom: $tool is missing (make deps-test installs it)"; exit 1; }
done
scrapes=${SCRAPES:-50}
idle=${GPUCANARY_IDLE_SECONDS:-30}

echo "== One scrape, 100 environments and 1000 processes (goal: < 5 ms)"
go test -run '^$' -bench 'BenchmarkScrape$|BenchmarkCollect$' -benchtime 2s ./output/prom/ 2>&1 | grep -E '^Benchmark' || true

[ -x bin/gpucanary-cli ] || go build -trimpath -tags nogui -o bin/gpucanary-cli ./cmd/gpucanary
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# listening LOG: waits for a "listening on" line and prints the address.
listening() {
  for _ in $(seq 300); do
    a=$(grep -oE '(serving metrics on |address=)127\.0\.0\.1:[0-9]+' "$1" | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
    [ -n "$a" ] && { echo "$a"; return; }
    sleep 0.1
  done
  echo "bench-prom: nothing listened; log:" >&2; cat "$1" >&2; exit 1
}
# median URL: the median time of $scrapes scrapes, in ms.
median() {
  curl -s -o /dev/null "$1"
  for _ in $(seq "$scrapes"); do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done |
    sort -n | awk '{t[NR]=$1} END {printf "%.2f ms", t[int((NR+1)/2)]*1000}'
}

cat >"$work/a100.json" <<'JSON'
{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}
JSON
XDG_STATE_HOME="$work/state" bin/gpucanary-cli --gpu-sim "$work/a100.json" agent --web.listen-address 127.0.0.1:0 >"$work/agent.log" 2>&1 &
agent=$!; pids+=("$agent")
prometheus-node-exporter --web.listen-address=127.0.0.1:0 >"$work/node.log" 2>&1 &
pids+=("$!")
agent_addr=$(listening "$work/agent.log")
node_addr=$(listening "$work/node.log")
for _ in $(seq 600); do curl -sf "http://$agent_addr/-/ready" >/dev/null && break; sleep 0.1; done

echo
echo "== A real scrape over HTTP on this host, median of $scrapes (curl time_total)"
series() { curl -s "$1" | grep -vc '^#'; }
echo "gpucanary agent:  $(median "http://$agent_addr/metrics"), $(series "http://$agent_addr/metrics") series ($(curl -s "http://$agent_addr/metrics" | grep -c '^gpucanary_') of them gpucanary_)"
echo "node_exporter:    $(median "http://$node_addr/metrics"), $(series "http://$node_addr/metrics") series (default collectors)"

echo
echo "== The agent's CPU over $idle s of an idle machine, unscraped and scraped every second (goal: scraping adds nothing measurable)"
ticks() { awk '{print $14 + $15}' "/proc/$agent/stat"; }
hz=$(getconf CLK_TCK)
cpu() { awk -v d="$1" -v hz="$hz" -v s="$idle" 'BEGIN {printf "%.3f %% of a core (%d clock ticks in %d s)", 100*d/hz/s, d, s}'; }
before=$(ticks); sleep "$idle"; after=$(ticks)
echo "unscraped:                $(cpu $((after - before)))"
before=$(ticks)
for _ in $(seq "$idle"); do curl -s -o /dev/null "http://$agent_addr/metrics"; sleep 1; done
after=$(ticks)
echo "scraped every second:     $(cpu $((after - before))), RSS $(awk '/VmRSS/ {printf "%.0f MB", $2/1024}' "/proc/$agent/status")"
