#!/usr/bin/env bash
# make test-windows: the Windows build, tested on Linux under wine.
#
#   scripts/test-windows.sh [test|bench]
#
# test (the default) makes a throwaway wine prefix, builds the stand-ins
# with mingw-w64 (bcryptprimitives.dll, which Go programs need and wine 8
# lacks; nvml.dll from monitor/gpu/testdata/nvmlstub; a runtime DLL, a
# workload and a pip from monitor/procs/testdata/winstub), cross-builds
# the Windows test binaries of the packages in WINE_PACKAGES with no cgo
# and runs them under wine64, then runs the CLI end to end: `check` on a
# CPU-torch venv with the stand-in nvml.dll (an RTX 4090) must say
# TORCH_CPU_BUILD naming the GPU and exit 1; without nvml.dll it must say
# NO_GPU_DRIVER and why, on one line; with two workloads running from
# venvs under a simulated A100, `ps --json` must list them with their
# environments, modules and verdicts (cpu, cuda-idle), and `watch --json`
# must raise JOB_ON_CPU for the CPU one and name the stand-in pip that
# overwrites the CUDA venv as the culprit; `check --json` with no path
# must find the one-click apps' environments where Windows users keep
# them (ComfyUI portable's embedded Python on the Desktop, Stability
# Matrix, AUTOMATIC1111, text-generation-webui, Pinokio at C:\pinokio),
# name each app, and give the embedded Python's CPU torch its own pip's
# repair command; `guard` on a CUDA venv must write its pip.ini, `check`
# say guarded and `unguard` give the venv back (scripts/wine/guard_e2e.sh);
# `watch --json` over stand-in PDH counters, event log and jobs must raise
# VRAM_SPILL, DRIVER_RESET and JOB_ENDED (scripts/wine/training_e2e.sh).
# Any failure fails the script.
#
# bench runs under wine BenchmarkSnapshotNVMLDLL (one NVML snapshot
# through the Windows backend and the stand-in) and BenchmarkScan100 and
# BenchmarkFirstScan100 (one process refresh with about 100 processes
# alive, steady and first).
#
# WINE_PACKAGES: the packages whose tests run under wine. A package joins
# the list once its tests pass there (docs/testing.md, "Testing the Windows build").
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=C.UTF-8

mode=${1:-test}
packages=(${WINE_PACKAGES:-./monitor/gpu ./monitor/store ./monitor/procs})

wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
mingw=x86_64-w64-mingw32-gcc
for tool in "$wine" "$wineserver" "$mingw"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "test-windows: $tool is missing; make deps-test installs wine64 and gcc-mingw-w64-x86-64" >&2
    exit 1
  fi
done

start=$SECONDS
work=$(mktemp -d /tmp/gpucanary-wine.XXXXXX)
export WINEPREFIX=$work/prefix WINEDEBUG=-all
# No Mono or Gecko: nothing here needs .NET or HTML, and their installers
# would ask.
export WINEDLLOVERRIDES="mscoree=;mshtml="
boot=
# msi_e2e makes a folder of the prefix immutable for a moment (chattr +i);
# a run cut short there must not leave it so, or rm could not remove it.
msi_immutable=
cleanup() {
  [ -n "$boot" ] && wait "$boot" 2>/dev/null || true
  [ -n "$msi_immutable" ] && chattr -i "$msi_immutable" 2>/dev/null || true
  "$wineserver" -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf 'test-windows: %-58s (%3d s)\n' "$1" $((SECONDS - start)); }
# Windows as its users live it (PowerShell quoting, no console windows,
# toasts, the exes' resources and zip, one instance, the report).
. scripts/wine/desktop.sh

# winpath is a Linux path as the wine process sees it (Z: is /).
winpath() { local p=${1//\//\\}; printf 'Z:%s' "$p"; }

# The prefix boots while the Go builds run.
"$wine" wineboot -i >"$work/wineboot.log" 2>&1 &
boot=$!

mkdir -p "$work/bin" "$work/stub" "$work/procstub"
$mingw -O2 -Wall -shared -o "$work/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c
$mingw -std=c11 -O2 -Wall -Wextra -shared -o "$work/stub/nvml.dll" monitor/gpu/testdata/nvmlstub/nvml.c
$mingw -std=c11 -O2 -Wall -Wextra -shared -DNVMLSTUB_OLD -o "$work/stub/nvml-old.dll" monitor/gpu/testdata/nvmlstub/nvml.c
# The process side: a runtime DLL the tests copy under torch's names, a
# workload that loads them and a pip that overwrites a venv.
winstub=monitor/procs/testdata/winstub
$mingw -std=c11 -O2 -Wall -Wextra -shared -o "$work/procstub/runtime.dll" $winstub/runtime.c
$mingw -std=c11 -O2 -Wall -Wextra -municode -o "$work/procstub/workload.exe" $winstub/workload.c
$mingw -std=c11 -O2 -Wall -Wextra -municode -o "$work/procstub/pip.exe" $winstub/pip.c
step "stand-in DLLs and programs built"

# Go 1.25 and later remove files in os.RemoveAll (t.TempDir's clean-up)
# with FILE_DISPOSITION_INFORMATION_EX; wine 8 answers
# STATUS_NOT_IMPLEMENTED, which Go does not fall back on, so every test
# with a temporary directory would fail its clean-up. The test binaries
# (never the CLI below, which is built as shipped) get a copy of that Go
# file that falls back on it too.
overlay=()
at=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
fallback='STATUS_NOT_SUPPORTED:     // the file system'
if [ -f "$at" ] && grep -q "$fallback" "$at"; then
  sed "s|\(\t*\)$fallback|\1NTStatus(0xC0000002), // STATUS_NOT_IMPLEMENTED: wine 8\n\1$fallback|" "$at" >"$work/at_windows.go"
  printf '{"Replace":{"%s":"%s"}}\n' "$at" "$work/at_windows.go" >"$work/overlay.json"
  overlay=(-overlay "$work/overlay.json")
else
  echo "test-windows: note: $at has changed; building the tests without the wine RemoveAll fallback"
fi

# No cgo: the Windows GPU backend must build without a C compiler.
wingo() { GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go "$@"; }
testexe() { echo "$work/bin/$(echo "${1#./}" | tr / _).test.exe"; }
if [ "$mode" = bench ]; then
  packages=(./monitor/gpu ./monitor/procs)
fi
for p in "${packages[@]}"; do
  wingo test -c "${overlay[@]}" -tags nogui -o "$(testexe "$p")" "$p"
done
step "test binaries cross-built (${packages[*]})"
if [ "$mode" = test ]; then
  wingo build -tags nogui -trimpath -o "$work/bin/gpucanary.exe" ./cmd/gpucanary
  step "gpucanary.exe cross-built (-tags nogui, no cgo)"
  desktop_build
fi

wait "$boot" || { cat "$work/wineboot.log"; echo "test-windows: wineboot failed" >&2; exit 1; }
boot=
system32=$WINEPREFIX/drive_c/windows/system32
cp "$work/bcryptprimitives.dll" "$system32/"
step "wine prefix ready"

stubs=$(winpath "$work/stub")
export GPUCANARY_PROCS_STUB_DIR=$(winpath "$work/procstub")
if [ "$mode" = bench ]; then
  (cd monitor/gpu && GPUCANARY_NVMLSTUB_DIR=$stubs "$wine" "$(testexe ./monitor/gpu)" \
    -test.run '^$' -test.bench 'BenchmarkSnapshotNVMLDLL$' -test.benchtime "${BENCHTIME:-2000x}" -test.benchmem)
  (cd monitor/procs && "$wine" "$(testexe ./monitor/procs)" \
    -test.run '^$' -test.bench '^BenchmarkScan100$' -test.benchtime 200x -test.benchmem)
  (cd monitor/procs && "$wine" "$(testexe ./monitor/procs)" \
    -test.run '^$' -test.bench '^BenchmarkFirstScan100$' -test.benchtime 10x -test.benchmem)
  exit 0
fi

failed=()
for p in "${packages[@]}"; do
  if (cd "$p" && GPUCANARY_NVMLSTUB_DIR=$stubs "$wine" "$(testexe "$p")" -test.count=1 -test.timeout=5m ${WINE_TESTFLAGS:-}); then
    step "tests pass under wine: $p"
  else
    failed+=("$p")
    step "TESTS FAIL under wine: $p"
  fi
done

# mkvenv VENV VERSION LIB...: a venv in the Windows layout, as pip makes
# it, with torch VERSION; each LIB is in torch\lib (a copy of the
# stand-in runtime DLL), and Scripts\python.exe is the stand-in workload.
mkvenv() {
  local venv=$1 version=$2 cuda=None lib
  shift 2
  local site=$venv/Lib/site-packages
  mkdir -p "$venv/Scripts" "$site/torch/lib" "$site/torch-$version.dist-info"
  printf 'home = C:\\Python311\ninclude-system-site-packages = false\nversion = 3.11.7\n' >"$venv/pyvenv.cfg"
  printf 'Metadata-Version: 2.1\nName: torch\nVersion: %s\n' "$version" >"$site/torch-$version.dist-info/METADATA"
  printf 'pip\n' >"$site/torch-$version.dist-info/INSTALLER"
  printf 'torch/__init__.py,,\n' >"$site/torch-$version.dist-info/RECORD"
  case $version in *+cu121) cuda="'12.1'" ;; esac
  printf "__version__ = '%s'\ndebug = False\ncuda = %s\nhip = None\n" "$version" "$cuda" >"$site/torch/version.py"
  : >"$site/torch/__init__.py"
  for lib in "$@"; do
    cp "$work/procstub/runtime.dll" "$site/torch/lib/$lib"
  done
  cp "$work/procstub/workload.exe" "$venv/Scripts/python.exe"
  # the Python pyvenv.cfg's home names, which Scripts\python.exe runs:
  # without it the venv's interpreter is missing (ENV_INTERPRETER_MISSING)
  mkdir -p "$WINEPREFIX/drive_c/Python311"
  cp "$work/procstub/workload.exe" "$WINEPREFIX/drive_c/Python311/python.exe"
}

# End to end: a CPU-torch venv.
venv=$work/proj/.venv
mkvenv "$venv" 2.5.1+cpu torch_cpu.dll

e2e_fail() { echo "test-windows: e2e: $1" >&2; echo "--- output:"; cat "$work/out"; failed+=("e2e"); }
check() { # scenario; runs gpucanary.exe check on the venv, output in $work/out, status in $code
  code=0
  NVMLSTUB_SCENARIO=$1 NO_COLOR=1 "$wine" "$work/bin/gpucanary.exe" check "$(winpath "$venv")" >"$work/out" 2>&1 || code=$?
}

cp "$work/stub/nvml.dll" "$system32/nvml.dll"
check rtx4090-wddm
if [ "$code" != 1 ]; then
  e2e_fail "check with the RTX 4090 exited $code, want 1"
elif ! grep -q 'TORCH_CPU_BUILD .*NVIDIA GeForce RTX 4090' "$work/out"; then
  e2e_fail "check with the RTX 4090 does not say TORCH_CPU_BUILD naming the GPU"
else
  step "e2e: check says TORCH_CPU_BUILD naming the RTX 4090, exit 1"
fi

rm "$system32/nvml.dll"
check none
line=$(grep 'NO_GPU_DRIVER' "$work/out" || true)
if [ "$code" != 0 ]; then
  e2e_fail "check without nvml.dll exited $code, want 0"
elif [ "$(printf '%s\n' "$line" | grep -c .)" != 1 ] || ! grep -q 'nvml.dll was not found in C:\\windows\\system32' <<<"$line"; then
  e2e_fail "check without nvml.dll does not say NO_GPU_DRIVER and why on one line"
else
  step "e2e: without nvml.dll, NO_GPU_DRIVER says why on one line"
fi

# End to end, the guard's pip.ini (scripts/wine/guard_e2e.sh).
. scripts/wine/guard_e2e.sh
guard_e2e

# End to end, the processes (scripts/wine/procs_e2e.sh).
procs_start=$SECONDS
. scripts/wine/procs_e2e.sh
step "e2e: processes ($((SECONDS - procs_start)) s)"

# End to end, the training companion: VRAM_SPILL, DRIVER_RESET and
# JOB_ENDED from stand-in PDH, event log and jobs (scripts/wine/training_e2e.sh).
training_start=$SECONDS
. scripts/wine/training_e2e.sh
step "e2e: training ($((SECONDS - training_start)) s)"

# End to end, the one-click apps' environments (scripts/wine/apps_e2e.sh).
. scripts/wine/apps_e2e.sh

# The desktop side: toasts, one instance, resources (scripts/wine/desktop.sh).
desktop_checks

# End to end, the MSI that desktop_checks' dist-windows.sh built (scripts/wine/msi_e2e.sh).
. scripts/wine/msi_e2e.sh
msi_e2e

if [ ${#failed[@]} -gt 0 ]; then
  echo "test-windows: FAILED: ${failed[*]}" >&2
  exit 1
fi
step "all Windows tests pass"
