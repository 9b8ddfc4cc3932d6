#!/usr/bin/env bash
# Builds GPU Canary's Windows installer with wixl (msitools) from
# packaging/windows/gpucanary.wxs (scripts/dist-windows.sh runs it):
#   OUT/gpucanary-VERSION-x64.msi   per-user: %LOCALAPPDATA%\Programs\GPU Canary,
#                                   a Start-menu shortcut, an "Apps" entry;
#                                   AUTOSTART=1 adds the Run-key value, LAUNCH=1
#                                   starts the tray after a quiet install;
#                                   an upgrade or uninstall first runs
#                                   gpucanaryw.exe quit
# Usage: scripts/dist-msi.sh OUT
# Environment: VERSION (scripts/version.sh), BUILD_DATE (RFC 3339: the
# MSI's dates), EXES (the folder with gpucanary.exe and gpucanaryw.exe),
# LICENCES (the Windows build's third_party_licenses folder),
# MSI_VERSION (the MSI's ProductVersion, three numbers; default VERSION up
# to its first ~ or +: Windows Installer orders only numbers, so a
# pre-release installs as its release would), SIGN_* as for the exes.
# The same inputs give the same bytes: wixl's random product and package
# codes are replaced by ones derived from the version, and its clock is
# BUILD_DATE (faketime, and the files' times in its cabinet).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/dist-msi.sh OUT}
: "${VERSION:?}" "${BUILD_DATE:?}" "${EXES:?}" "${LICENCES:?}"
for tool in wixl msibuild faketime; do
  command -v "$tool" >/dev/null || { echo "dist-msi: $tool is missing (make deps-test installs wixl, msitools and faketime)" >&2; exit 1; }
done
msi_version=${MSI_VERSION:-$(sed -E 's/[~+].*//' <<<"$VERSION")}
[[ $msi_version =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,5}$ ]] || { echo "dist-msi: MSI version $msi_version is not three numbers" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# wixl looks for the sources beside the .wxs.
cp packaging/windows/gpucanary.wxs "$EXES/gpucanary.exe" "$EXES/gpucanaryw.exe" README.md LICENSE "$stage/"
# The licences as one text file: the index, then each text under its path.
{
  cat "$LICENCES/licenses.tsv"
  (cd "$LICENCES" && find . -type f ! -name licenses.tsv | LC_ALL=C sort) | while read -r f; do
    printf '\n%s\n%s\n%s\n\n' "$(printf '%.0s-' {1..72})" "${f#./}" "$(printf '%.0s-' {1..72})"
    cat "$LICENCES/$f"
  done
} >"$stage/THIRD_PARTY_LICENSES.txt"

# The cabinet records each file's time: the build date, not the copy's.
touch -d "$BUILD_DATE" "$stage"/*

# guid NAME: a GUID made from NAME (SHA-256), in the form a UUID has.
guid() {
  local h
  h=$(printf '%s' "$1" | sha256sum | tr 'a-f' 'A-F')
  printf '%s-%s-4%s-8%s-%s' "${h:0:8}" "${h:8:4}" "${h:13:3}" "${h:17:3}" "${h:20:12}"
}
product=$(guid "gpucanary msi product $msi_version $VERSION")
package=$(guid "gpucanary msi package $msi_version $VERSION $(cat "$stage"/* | sha256sum)")
name=gpucanary-$VERSION-x64.msi
when=$(TZ=UTC date -u -d "$BUILD_DATE" '+%F %T')
echo "dist-msi: $name (ProductVersion $msi_version)"
(cd "$stage" && TZ=UTC faketime -f "$when" wixl -a x64 -D Version="$msi_version" -D ProductCode="$product" \
  -o "$stage/out.msi" gpucanary.wxs)
# wixl writes Root="HKMU" as root 4, which Windows Installer does not
# know; its HKMU, the root that follows the install's scope (HKCU per
# user, HKLM with ALLUSERS=1), is -1. Every registry value of the package
# is HKMU (gpucanary.wxs), so every 4 becomes -1.
# wixl draws the package code at random and ignores Package/@Id: set it,
# with the summary's subject, as msibuild writes them.
TZ=UTC faketime -f "$when" msibuild "$stage/out.msi" -q "UPDATE \`Registry\` SET \`Root\` = -1 WHERE \`Root\` = 4" \
  -s "GPU Canary $VERSION" "GPU Canary" "x64;1033" "{$package}"
if [ -n "${SIGN_PKCS12:-}" ]; then
  echo "dist-msi: signing $name (osslsigncode, $SIGN_PKCS12)"
  osslsigncode sign -pkcs12 "$SIGN_PKCS12" -readpass "${SIGN_PASSWORD_FILE:?SIGN_PASSWORD_FILE must name the file holding the certificate password}" \
    -h sha256 -n "GPU Canary" ${SIGN_TIMESTAMP_URL:+-ts "$SIGN_TIMESTAMP_URL"} \
    -in "$stage/out.msi" -out "$stage/signed.msi" >/dev/null
  mv "$stage/signed.msi" "$stage/out.msi"
fi
mv "$stage/out.msi" "$out/$name"
