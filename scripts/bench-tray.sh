#!/usr/bin/env bash
# The tray app's idle cost: CPU over a window (default 60 s) and resident
# memory, with the real binary on Xvfb and a session bus, watching a HOME
# with a few environments. Goals: <= 0.5 % of a core, <= 100 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${GPUCANARY_IDLE_SECONDS:-60}
go build -o bin/gpucanary ./cmd/gpucanary
go build -o bin/fyne-baseline ./scripts/fyne-baseline
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for i in 1 2 3 4 5; do python3 -m venv --without-pip "$home/proj$i/.venv"; done
printf '{"driver": "550.54.15", "cuda_driver": "12.4", "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960, "processes": []}]}' > "$home/gpu.json"
export HOME=$home SECS=$secs LANG=C.UTF-8
# Xvfb runs with -noreset, as a desktop's X server does in effect (a
# desktop keeps clients connected): without it, each poll for the window
# below, while no other client is connected, resets the server and
# recompiles its keymap, which slows the start it measures
# (scripts/bench-window.sh times the windows alone, several runs).
dbus-run-session -- bash -c '
  Xvfb :89 -screen 0 1280x800x24 -nolisten tcp -noreset >/dev/null 2>&1 & xvfb=$!; export DISPLAY=:89; sleep 1
  trap "kill $xvfb 2>/dev/null || true" EXIT # it outlives the session bus otherwise
  status-notifier-watcher >/dev/null 2>&1 &
  measure() { # NAME CMD...: idle CPU over SECS after a 10 s start, and RSS
    name=$1; shift
    "$@" >/dev/null 2>&1 & pid=$!
    sleep 10
    t0=$(awk "{print \$14 + \$15}" /proc/$pid/stat); sleep "$SECS"; t1=$(awk "{print \$14 + \$15}" /proc/$pid/stat)
    rss=$(awk "/VmRSS/ {print \$2}" /proc/$pid/status)
    awk -v n="$name" -v a=$t0 -v b=$t1 -v hz=$(getconf CLK_TCK) -v s=$SECS -v rss=$rss "BEGIN { printf \"%-28s idle over %ds: %.2f %% of a core, RSS %.0f MB\n\", n, s, 100*(b-a)/hz/s, rss/1024 }"
    kill $pid; wait $pid 2>/dev/null || true
  }
  echo "goals for the tray: <= 0.5 % of a core, <= 100 MB"
  measure "gpucanary (tray, 5 envs)" bin/gpucanary --gpu-sim "$HOME/gpu.json"
  measure "peer: empty Fyne tray app" bin/fyne-baseline
  # The windows are a process of their own, started on demand: how long
  # until a window is on the screen, and what that process holds while open.
  start=$(date +%s%N)
  bin/gpucanary --gpu-sim "$HOME/gpu.json" ui --show envs >/dev/null 2>&1 & pid=$!
  until xwininfo -root -tree 2>/dev/null | grep -q "GPU Canary — Environments"; do sleep 0.01; done
  shown=$(( ($(date +%s%N) - start) / 1000000 ))
  sleep 3
  rss=$(awk "/VmRSS/ {print \$2}" /proc/$pid/status)
  printf "%-28s window on screen after %d ms, RSS %d MB while open\n" "gpucanary ui (windows)" "$shown" $((rss / 1024))
  kill $pid; wait $pid 2>/dev/null || true
'
