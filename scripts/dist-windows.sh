#!/usr/bin/env bash
# Builds GPU Canary's Windows release archive into OUT (make dist-windows
# runs it after make windows):
#   gpucanary-VERSION-windows-amd64.zip   one folder a user unpacks and runs:
#                                         gpucanaryw.exe (the tray; start it,
#                                         pin it, "Start at login" in Settings),
#                                         gpucanary.exe (every command, in a
#                                         console), README.md, docs/, LICENSE,
#                                         third_party_licenses/ (of the
#                                         Windows build: go-licenses with
#                                         GOOS=windows)
#   gpucanary-VERSION-x64.msi             the installer (scripts/dist-msi.sh)
#   winget/manifests/g/GPUCanary/GPUCanary/VERSION/*.yaml, scoop/gpucanary.json
#                                         the package managers' manifests for
#                                         the files just built (their SHA256),
#                                         downloaded from RELEASE_URL/NAME
# Usage: scripts/dist-windows.sh OUT
# Environment: GO, VERSION (scripts/version.sh), BUILD_DATE (RFC 3339, every
# file's time in the archive; default now), EXES (the folder holding the two
# exes; default bin, where make windows puts them, with their resources
# from scripts/winres.sh), RELEASE_URL (where the release's files will be
# downloaded from; default the GitHub release of tag vVERSION, a
# pre-release's ~ as -). KEEP_WORK=1 keeps OUT/.work-windows.
# Signing (docs/windows.md): SIGN_PKCS12=FILE.pfx with its password in
# SIGN_PASSWORD_FILE signs both exes with osslsigncode (SHA-256
# Authenticode) before they are zipped, time-stamped by SIGN_TIMESTAMP_URL
# when set; unset, the exes go out unsigned.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/dist-windows.sh OUT}
GO=${GO:-go}
VERSION=${VERSION:-$(scripts/version.sh)}
BUILD_DATE=${BUILD_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
exes=${EXES:-bin}
for exe in gpucanary.exe gpucanaryw.exe; do
  [ -f "$exes/$exe" ] || { echo "dist-windows: $exes/$exe is missing (make windows builds it)" >&2; exit 1; }
done
command -v zip >/dev/null || { echo "dist-windows: zip is missing (make deps-test installs it)" >&2; exit 1; }
SOURCE_DATE_EPOCH=$(date -u -d "$BUILD_DATE" +%s)

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/.work-windows
rm -rf "$work"
mkdir -p "$work"

echo "dist-windows: third-party licences of the Windows build (go-licenses, GOOS=windows)"
$GO -C scripts/release build -o "$work/" github.com/google/go-licenses ./licenses
GOOS=windows GOARCH=amd64 CGO_ENABLED=1 "$work/licenses" -go-licenses "$work/go-licenses" -o "$work/licenses-windows" ./cmd/gpucanary

name=gpucanary-$VERSION-windows-amd64
echo "dist-windows: $name.zip"
stage=$work/$name
mkdir -p "$stage"
cp "$exes/gpucanary.exe" "$exes/gpucanaryw.exe" README.md LICENSE "$stage/"
mkdir -p "$stage/docs" && cp docs/*.md "$stage/docs/"
if [ -n "${SIGN_PKCS12:-}" ]; then
  command -v osslsigncode >/dev/null || { echo "dist-windows: SIGN_PKCS12 is set but osslsigncode is missing" >&2; exit 1; }
  for exe in gpucanary.exe gpucanaryw.exe; do
    echo "dist-windows: signing $exe (osslsigncode, $SIGN_PKCS12)"
    osslsigncode sign -pkcs12 "$SIGN_PKCS12" -readpass "${SIGN_PASSWORD_FILE:?SIGN_PASSWORD_FILE must name the file holding the certificate password}" \
      -h sha256 -n "GPU Canary" ${SIGN_TIMESTAMP_URL:+-ts "$SIGN_TIMESTAMP_URL"} \
      -in "$stage/$exe" -out "$stage/$exe.signed" >/dev/null
    mv "$stage/$exe.signed" "$stage/$exe"
  done
fi
cp -r "$work/licenses-windows" "$stage/third_party_licenses"
# The same commit and date give the same bytes: sorted names, one time,
# no extra attributes, times in UTC.
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
rm -f "$out/$name.zip"
(cd "$work" && find "$name" | LC_ALL=C sort | TZ=UTC zip -X -9 -q "$out/$name.zip" -@)

# The installer, of the same (signed) exes.
EXES=$stage LICENCES=$work/licenses-windows VERSION=$VERSION BUILD_DATE=$BUILD_DATE scripts/dist-msi.sh "$out"
msi=$out/gpucanary-$VERSION-x64.msi
product=$(msiinfo export "$msi" Property | tr -d '\r' | awk -F'\t' '$1 == "ProductCode" {print $2}')

echo "dist-windows: winget and Scoop manifests"
RELEASE_URL=${RELEASE_URL:-https://github.com/gpucanary/gpucanary/releases/download/v${VERSION//\~/-}}
rm -rf "$out/winget" "$out/scoop"
$GO -C scripts/release build -o "$work/" ./manifests
"$work/manifests" -version "$VERSION" -release-url "$RELEASE_URL" -zip "$out/$name.zip" -msi "$msi" -msi-product-code "$product" -o "$out" >/dev/null

[ "${KEEP_WORK:-}" = 1 ] || rm -rf "$work"
echo "dist-windows: done in $out"
