#!/usr/bin/env bash
# make test-loaded: run `make test` RUNS times in a row (default 5) on a
# fresh clone of HEAD while another job keeps every core busy. A test that
# races the clock fails here long before it fails on a user's machine
# (docs/testing.md). It prints each run's result, time and load average.
#
# The clone is fresh (no bin/, no build outputs), the Go caches are the
# machine's own: a cold cache only makes the first run longer, never
# changes what a test asserts.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
load=${LOAD:-$(nproc)}
rev=$(git rev-parse --short HEAD)

work=$(mktemp -d "${TMPDIR:-/tmp}/gpucanary-loaded.XXXXXX")
logs=${LOGDIR:-$work/logs}
mkdir -p "$logs"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$work/src"
}
trap cleanup EXIT INT TERM

git clone -q --no-local . "$work/src"
git -C "$work/src" checkout -q --detach "$rev"

# The other job: one busy loop per core, at normal priority, for the
# whole series.
for _ in $(seq "$load"); do
	( while :; do :; done ) &
	pids+=("$!")
done
echo "make test x$runs on a fresh clone of $rev, $load busy loops on $(nproc) cores; logs in $logs"

failed=0
for i in $(seq "$runs"); do
	start=$(date +%s)
	if (cd "$work/src" && make test) >"$logs/run-$i.log" 2>&1; then rc=0; else rc=$?; fi
	secs=$(($(date +%s) - start))
	load_avg=$(cut -d' ' -f1 /proc/loadavg)
	if [ "$rc" = 0 ]; then
		printf 'run %d: pass in %dm%02ds (load average %s)\n' "$i" $((secs / 60)) $((secs % 60)) "$load_avg"
	else
		failed=$((failed + 1))
		printf 'run %d: FAIL (exit %d) after %dm%02ds (load average %s); the failing tests:\n' "$i" "$rc" $((secs / 60)) $((secs % 60)) "$load_avg"
		grep -E -- '^(--- FAIL|FAIL|make: \*\*\*)' "$logs/run-$i.log" | sed 's/^/    /' | head -20 || true
	fi
done
echo "$((runs - failed)) of $runs passed"
[ "$failed" = 0 ]
