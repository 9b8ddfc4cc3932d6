#!/usr/bin/env bash
# Writes the Windows resources of one GPU Canary exe into
# cmd/gpucanary/rsrc_windows_amd64.syso, which the next Windows `go build`
# of ./cmd/gpucanary links in: the icon (every size of the application
# icon), the version information (name and ID from FyneApp.toml, the
# version from scripts/version.sh or VERSION) and a manifest (Windows 10
# and later, per-monitor DPI aware, asInvoker: never asks for elevation,
# long paths). go-winres (github.com/tc-hib/go-winres) is pinned as a tool
# in scripts/release/go.mod.
#
#   scripts/winres.sh gui|console [SYSO]
#
# gui is gpucanaryw.exe (the tray, linked -H windowsgui), console is
# gpucanary.exe (every command in a console). SYSO defaults to
# cmd/gpucanary/rsrc_windows_amd64.syso (ignored by git; make windows
# removes it after the builds).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/winres.sh gui|console [SYSO]}
syso=${2:-cmd/gpucanary/rsrc_windows_amd64.syso}
GO=${GO:-go}
VERSION=${VERSION:-$(scripts/version.sh)}
case $kind in
  gui) file=gpucanaryw.exe desc="GPU Canary" ;;
  console) file=gpucanary.exe desc="GPU Canary (command line)" ;;
  *) echo "winres: $kind: want gui or console" >&2; exit 2 ;;
esac
toml() { sed -n "s/^ *$1 *= *\"\(.*\)\"/\1/p" FyneApp.toml | head -n1; }
name=$(toml Name)
id=$(toml ID)
[ -n "$name" ] && [ -n "$id" ] || { echo "winres: FyneApp.toml has no Name or ID" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$GO -C scripts/release build -o "$work/go-winres" github.com/tc-hib/go-winres
# go-winres reads the icons relative to the JSON file.
for size in 256 128 64 48 32 24 16; do
  cp "packaging/linux/icons/hicolor/${size}x$size/apps/$id.png" "$work/icon$size.png"
done
icon() { printf '"icon%s.png"' "$1"; }
cat >"$work/winres.json" <<JSON
{
  "RT_GROUP_ICON": {"APP": {"0000": [$(icon 256), $(icon 128), $(icon 64), $(icon 48), $(icon 32), $(icon 24), $(icon 16)]}},
  "RT_MANIFEST": {"#1": {"0409": {
    "identity": {"name": "$id", "version": ""},
    "description": "$desc",
    "minimum-os": "win10",
    "execution-level": "as invoker",
    "ui-access": false,
    "auto-elevate": false,
    "dpi-awareness": "per monitor v2",
    "disable-theming": false,
    "disable-window-filtering": false,
    "high-resolution-scrolling-aware": false,
    "ultra-high-resolution-scrolling-aware": false,
    "long-path-aware": true,
    "printer-driver-isolation": false,
    "gdi-scaling": false,
    "segment-heap": false,
    "use-common-controls-v6": true
  }}},
  "RT_VERSION": {"#1": {"0000": {
    "fixed": {"file_version": "0.0.0.0", "product_version": "0.0.0.0"},
    "info": {"0409": {
      "CompanyName": "$name",
      "FileDescription": "$desc",
      "InternalName": "$id",
      "LegalCopyright": "Apache-2.0; see LICENSE and third_party_licenses",
      "OriginalFilename": "$file",
      "ProductName": "$name"
    }}
  }}}
}
JSON
"$work/go-winres" make --in "$work/winres.json" --arch amd64 --no-suffix --out "$work/rsrc.syso" \
  --file-version "$VERSION" --product-version "$VERSION"
mv "$work/rsrc.syso" "$syso"
