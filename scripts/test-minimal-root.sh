#!/usr/bin/env bash
# Can gpucanary-cli be built with CGO_ENABLED=0 and still see the GPU? No:
# go-nvml is cgo (it dlopens libnvidia-ml.so.1 through libdl), and without
# cgo monitor/gpu builds its stand-in that says NVML is not available. This
# test shows it in minimal roots (chroot), with a stand-in libnvidia-ml.so.1
# whose nvmlInit_v2 answers "driver not loaded", so a program that loads the
# library says so:
#   root 1: the cgo CLI alone            fails to start: no ELF interpreter
#                                         (what a musl system such as Alpine
#                                         without glibc is to it)
#   root 2: + ld-linux and libc.so.6      runs, loads libnvidia-ml.so.1 at
#           (what ldd names) + the stub   run time: "the NVIDIA driver is not loaded"
#   root 3: the CGO_ENABLED=0 CLI + stub  runs, never looks for the library:
#                                         "NVML is not available ... needs cgo"
# Usage: scripts/test-minimal-root.sh CLI_BINARY (built with cgo, -tags nogui)
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:?usage: scripts/test-minimal-root.sh CLI_BINARY}
GO=${GO:-go}
fail() { echo "minimal root: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -eq 0 ]; then
  in_root() { local r=$1; shift; env -i HOME=/ "$(command -v chroot)" "$r" "$@"; }
elif unshare -r true 2>/dev/null; then
  in_root() { local r=$1; shift; env -i HOME=/ "$(command -v unshare)" -r "$(command -v chroot)" "$r" "$@"; }
else
  echo "minimal root: skipped: chroot needs root or user namespaces (unshare -r), and neither is available"
  exit 0
fi
gpu_error() { /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["gpu"]["error"])'; }

cat >"$tmp/stub.c" <<'C'
/* A stand-in libnvidia-ml.so.1: NVML that finds no driver loaded. */
int nvmlInit_v2(void) { return 9; } /* NVML_ERROR_DRIVER_NOT_LOADED */
int nvmlInit(void) { return 9; }
const char *nvmlErrorString(int r) { return r == 9 ? "Driver Not Loaded" : "Unknown Error"; }
C
gcc -shared -fPIC -o "$tmp/libnvidia-ml.so.1" "$tmp/stub.c"

# Root 1: the binary alone.
mkdir -p "$tmp/r1"
cp "$cli" "$tmp/r1/gpucanary-cli"
rc=0
in_root "$tmp/r1" /gpucanary-cli --version >"$tmp/r1.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the cgo CLI ran without a C library: $(cat "$tmp/r1.out")"
echo "minimal root 1 (cgo CLI alone): exit $rc, $(head -c 200 "$tmp/r1.out")"

# Root 2: the binary, the libraries ldd names, the stand-in NVML.
mkdir -p "$tmp/r2"
cp "$cli" "$tmp/r2/gpucanary-cli"
libs=$(ldd "$cli" | grep -oE '/[^ ]+' | sort -u)
for lib in $libs; do
  mkdir -p "$tmp/r2$(dirname "$lib")"
  cp -L "$lib" "$tmp/r2$lib"
done
libc_dir=$(dirname "$(grep '/libc\.so' <<<"$libs")")
cp "$tmp/libnvidia-ml.so.1" "$tmp/r2$libc_dir/"
got=$(in_root "$tmp/r2" /gpucanary-cli check --json | gpu_error)
[ "$got" = "NVML could not start: the NVIDIA driver is not loaded" ] || fail "root 2: the cgo CLI says: $got"
echo "minimal root 2 (cgo CLI + $(echo $libs | wc -w) libraries from ldd + stand-in NVML): $got"

# Root 3: a CGO_ENABLED=0 build with the same stand-in.
CGO_ENABLED=0 $GO build -tags nogui -o "$tmp/static" ./cmd/gpucanary
if objdump -p "$tmp/static" | grep -qE 'NEEDED|INTERP'; then fail "the CGO_ENABLED=0 build is not static"; fi
mkdir -p "$tmp/r3$libc_dir"
cp "$tmp/static" "$tmp/r3/gpucanary-cli"
cp "$tmp/libnvidia-ml.so.1" "$tmp/r3$libc_dir/"
got=$(in_root "$tmp/r3" /gpucanary-cli check --json | gpu_error)
grep -q 'NVML is not available' <<<"$got" || fail "root 3: the static CLI says: $got"
echo "minimal root 3 (CGO_ENABLED=0 CLI + stand-in NVML): $got"
