#!/usr/bin/env bash
# make bench: every performance goal, each measured beside the peer it is
# compared with, on this machine. docs/performance.md's figures come from here.
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=C.UTF-8
run() { go test -run '^$' -bench "$2" -benchtime "${3:-1x}" "$1" 2>&1 | grep -E '^Benchmark' || true; }

echo "== Reading environments (goal: one environment < 1 ms)"
run ./monitor/pyenv/ 'BenchmarkInspect$' 1s

echo
echo "== check over 20 environments, end to end, vs 20 Python interpreters reading torch's metadata (goal: >= 50x faster)"
run ./cmd/gpucanary/ 'BenchmarkCheck20Envs|BenchmarkPython20Interpreters' 10x

echo
echo "== The CUDA kernels of the real 159 MB libggml-cuda.so, headers only (goals: <= 8 MB read, <= 50 ms; the full library when make test fetched it, else the carved headers)"
run ./monitor/fatbin/ 'BenchmarkReadReal|BenchmarkReadCarved' 20x

echo
echo "== check over 20 environments with real-size CUDA libraries, warm kernel cache (goal: within 1.5x of check over 20 environments)"
run ./cmd/gpucanary/ 'BenchmarkCheck20Envs$|BenchmarkCheck20EnvsCUDALibs' 10x

echo
echo "== check --json of 1000 environments, named and discovered in a home, beside the 5466d2d build in the same run, with the file facts a first run kept, and a run that keeps nothing (goals: warm <= 1.0x its time, cold <= 1.3x, peak <= 35 MB; discovered <= 300 ms)"
run ./cmd/gpucanary/ "BenchmarkCheck1000EnvsVsBaseline|BenchmarkCheck1000EnvsUncachedVsBaseline|BenchmarkDiscoverCheck1000EnvsVsBaseline" 5x

echo
echo "== One process refresh with 1000 processes alive, vs psutil gathering the same (goals: <= 25 ms, <= 2 MB, >= 10x less CPU)"
run ./monitor/procs/ 'BenchmarkScan1000|BenchmarkPsutilScan1000' 5x

echo
echo "== Installer exit to event (goal: <= 500 ms)"
run ./monitor/engine/ 'BenchmarkEventLatency' 6x

echo
echo "== Idle watch of 50 environments over ${GPUCANARY_IDLE_SECONDS:-60} s (goals: <= 0.5 % of a core, <= 3 inotify watches per environment)"
run ./monitor/engine/ 'BenchmarkIdleWatch50' 1x

echo
echo "== Processes window, 500 rows: one refresh, rendered (frame time)"
run ./app/ 'BenchmarkProcessesWindow500' 20x

echo
echo "== A window on the screen: ui alone and from the tray's click, beside an empty Fyne window (goal: <= 300 ms)"
scripts/bench-window.sh

echo
echo "== Tray app idle"
scripts/bench-tray.sh

echo
echo "== One NVML snapshot of the stand-in A100 (testdata/nvmlstub), through go-nvml on Linux"
run ./monitor/gpu/ 'BenchmarkSnapshotNVMLStub$' 2000x

echo
echo "== One process refresh with about 100 processes alive (steady; the first of a new source), on Linux"
run ./monitor/procs/ '^Benchmark(First)?Scan100$' 200x

echo
echo "== Under wine: the NVML snapshot through nvml.dll; the process refresh with about 100 processes alive"
scripts/test-windows.sh bench 2>&1 | grep -E '^Benchmark' || true

echo "== Prometheus agent: one scrape, beside node_exporter's"
scripts/bench-prom.sh
