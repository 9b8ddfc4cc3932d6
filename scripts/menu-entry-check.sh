#!/usr/bin/env bash
# Runs scripts/menu-entry-check.py in a session bus of its own with a
# StatusNotifierWatcher, as a desktop session has: the entry is found in
# XDG_DATA_HOME/XDG_DATA_DIRS, launched, and its tray must register.
# Usage: scripts/menu-entry-check.sh EXPECTED_PROGRAM (with the XDG_* and
# PATH of the session to imitate in the environment).
set -euo pipefail
cd "$(dirname "$0")/.."
# A desktop session has a display too: without one the tray says so in
# one line and exits (app/session), so give it a virtual one.
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  command -v xvfb-run >/dev/null || { echo "menu entry: xvfb-run is missing (make deps-test installs it)"; exit 1; }
  exec xvfb-run -a "$PWD/scripts/menu-entry-check.sh" "$@"
fi
for tool in dbus-run-session status-notifier-watcher; do
  command -v "$tool" >/dev/null || { echo "menu entry: $tool is missing (make deps-test installs it)"; exit 1; }
done
/usr/bin/python3 -c 'import gi; gi.require_version("Gio", "2.0")' 2>/dev/null ||
  { echo "menu entry: Debian's python3-gi is missing (make deps-test installs it)"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
dbus-run-session -- bash -c '
  status-notifier-watcher >/dev/null 2>&1 &
  watcher=$!
  rc=0
  /usr/bin/python3 scripts/menu-entry-check.py "$1" || rc=$?
  kill $watcher 2>/dev/null || true
  exit $rc
' _ "$1" 2>"$log" || { cat "$log" >&2; exit 1; }
