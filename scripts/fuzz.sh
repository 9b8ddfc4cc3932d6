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
#
# The targets are found by their `func Fuzz…` lines in the test files, not
# by `go test -list` in every package, which built every package's test
# binary (minutes on a fresh machine) to list ten targets in eight.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-50000x}
n=0
for dir in $(git ls-files -co --exclude-standard -- '*_test.go' | xargs grep -l '^func Fuzz' | xargs -n1 dirname | LC_ALL=C sort -u); do
  pkg=./$dir
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //'); do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/gpucanary-fuzz.log 2>&1 || { cat /tmp/gpucanary-fuzz.log; exit 1; }
    n=$((n+1))
  done
done
echo "fuzz: $n targets ran for $fuzztime each"
