#!/usr/bin/env bash
# The desktop end-to-end test: the real gpucanary binary on a real X server
# (Xvfb) and session bus, with a StatusNotifierWatcher (the tray host's
# side of the protocol) and dunst (a real notification daemon). The Go test
# in app/e2e drives the tray over DBus. ../shared/TESTING-DESKTOP.md.
#
# GPUCANARY_SCREENSHOTS=DIR saves screenshots of the windows it opens.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in Xvfb dbus-run-session status-notifier-watcher dunst xwininfo import xdotool; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (make deps-test installs it)"; exit 1; }
done
mkdir -p bin
go build -o bin/gpucanary ./cmd/gpucanary
go test -c -tags e2e -o bin/e2e.test ./app/e2e
export GPUCANARY_BIN=$PWD/bin/gpucanary LANG=C.UTF-8
# dunst as Debian configures it, but finding its icons in the Adwaita theme
# installed here (its recursive lookup finds none of the dialog-* icons), so
# the screenshots show each notification's icon; and with a context menu
# (`dunstctl context`) that picks the first Repair (or, on a job's end,
# Report) action, as a person would in dmenu, so that dunst itself
# invokes it.
dunstrc=$(mktemp)
trap 'rm -f "$dunstrc"' EXIT
sed -e 's/^\(\s*enable_recursive_icon_lookup\s*=\).*/\1 false/' \
    -e 's|^\(\s*icon_path\s*=\).*|\1 /usr/share/icons/Adwaita/48x48/legacy/|' \
    -e 's|^\(\s*dmenu\s*=\).*|\1 /usr/bin/grep -m1 -e Repair -e Report|' /etc/xdg/dunst/dunstrc >"$dunstrc"
export GPUCANARY_DUNSTRC=$dunstrc
shots=${GPUCANARY_SCREENSHOTS:-}
[ -n "$shots" ] && mkdir -p "$shots" && export GPUCANARY_SCREENSHOTS=$(cd "$shots" && pwd)

dbus-run-session -- bash -c '
  set -e
  display=:$((90 + RANDOM % 9))
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/tmp/gpucanary-e2e-xvfb.log 2>&1 &
  xvfb=$!
  export DISPLAY=$display
  for i in $(seq 50); do xwininfo -root >/dev/null 2>&1 && break; sleep 0.1; done
  status-notifier-watcher >/tmp/gpucanary-e2e-snw.log 2>&1 &
  dunst -config "$GPUCANARY_DUNSTRC" >/tmp/gpucanary-e2e-dunst.log 2>&1 &
  sleep 1
  rc=0
  (cd app/e2e && ../../bin/e2e.test -test.v -test.timeout 8m ${GPUCANARY_E2E_RUN:+-test.run "$GPUCANARY_E2E_RUN"}) || rc=$?
  kill $xvfb 2>/dev/null || true
  exit $rc
'
