#!/usr/bin/env bash
# Runs every fuzz target in the module briefly (FUZZTIME, default 5s), one
# at a time as `go test -fuzz` requires.
set -euo pipefail
fuzztime=${FUZZTIME:-5s}
n=0
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/gpucanary-fuzz.log 2>&1 || { cat /tmp/gpucanary-fuzz.log; exit 1; }
    n=$((n+1))
  done
done
echo "fuzz: $n targets ran for $fuzztime each"
