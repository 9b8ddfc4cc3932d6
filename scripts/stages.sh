#!/usr/bin/env bash
# make test's stages, one make target after another, each timed; the table
# of where the time went is printed at the end, and also when a stage
# fails (then it names the stage and stops there, as make would).
#
#   scripts/stages.sh TARGET...
#
# Why: a fresh machine's make test is apt, cold cgo builds (Fyne for Linux
# and for Windows), the race tests, wine and Prometheus; which of them
# costs what decides what to cut, and a guess is no measurement.
set -uo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
names=() secs=() results=()
total_start=$SECONDS

table() {
  local total=$((SECONDS - total_start))
  echo
  echo "make test: stage times"
  printf '  %-14s %8s  %s\n' stage time result
  for i in "${!names[@]}"; do
    printf '  %-14s %5dm%02ds  %s\n' "${names[$i]}" $((secs[$i] / 60)) $((secs[$i] % 60)) "${results[$i]}"
  done
  printf '  %-14s %5dm%02ds\n' total $((total / 60)) $((total % 60))
}

for stage in "$@"; do
  start=$SECONDS
  "$make" --no-print-directory "$stage"
  rc=$?
  names+=("$stage") secs+=($((SECONDS - start)))
  if [ "$rc" -ne 0 ]; then
    results+=("failed (exit $rc)")
    table
    exit "$rc"
  fi
  results+=(ok)
done
table
