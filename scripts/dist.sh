#!/usr/bin/env bash
# Builds GPU Canary's Linux release files into OUT (make dist runs it):
#   gpucanary-VERSION-linux-amd64.tar.gz   the tray and the CLI, the menu entry,
#                                          icons, user unit, install script,
#                                          README, docs/, LICENSE, licences
#   gpucanary_VERSION-1_amd64.deb          the tray app, menu entry and icons
#   gpucanary-cli_VERSION-1_amd64.deb      the command line and the user unit
#   gpucanary-VERSION-1.x86_64.rpm,        the same two packages for Fedora and
#   gpucanary-cli-VERSION-1.x86_64.rpm     openSUSE (dnf, zypper)
#   gpucanary-AVERSION-1-x86_64.pkg.tar.zst,   and for Arch Linux (pacman -U);
#   gpucanary-cli-AVERSION-1-x86_64.pkg.tar.zst AVERSION is VERSION without
#                                          ~ and + (pacman has neither)
# Usage: scripts/dist.sh OUT
# Environment (the Makefile sets each): GO, VERSION (scripts/version.sh),
# COMMIT, BUILD_DATE (RFC 3339, also every file's time in the archives),
# LDFLAGS (with the version stamps), BUILDFLAGS (go build flags; default
# -trimpath -buildmode=pie), MAINTAINER. KEEP_WORK=1 keeps OUT/.work (the
# binaries and licence folders) for tests to look at.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/dist.sh OUT}
GO=${GO:-go}
: "${VERSION:?}" "${COMMIT:?}" "${BUILD_DATE:?}" "${LDFLAGS:?}"
BUILDFLAGS=${BUILDFLAGS--trimpath -buildmode=pie}
MAINTAINER=${MAINTAINER:-GPU Canary maintainers <maintainers@gpucanary.invalid>}
# One time for everything: the binaries' build date, the files in the
# archives, the Debian changelog. The same commit and date give the same bytes.
SOURCE_DATE_EPOCH=$(date -u -d "$BUILD_DATE" +%s)
export SOURCE_DATE_EPOCH

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/.work
rm -rf "$work"
mkdir -p "$work/bin"

echo "dist: the packaging tools (nfpm, go-licenses; scripts/release/go.mod pins them)"
$GO -C scripts/release build -o "$work/" github.com/google/go-licenses ./licenses ./debs

echo "dist: building gpucanary and gpucanary-cli $VERSION ($BUILDFLAGS)"
# shellcheck disable=SC2086 # BUILDFLAGS is a list of flags
$GO build $BUILDFLAGS -ldflags "$LDFLAGS" -o "$work/bin/gpucanary" ./cmd/gpucanary
# shellcheck disable=SC2086
$GO build $BUILDFLAGS -tags nogui -ldflags "$LDFLAGS" -o "$work/bin/gpucanary-cli" ./cmd/gpucanary
if objdump -p "$work/bin/gpucanary-cli" | grep -E 'NEEDED +lib(GL|X11)'; then
  echo "dist: gpucanary-cli links a GUI library" >&2
  exit 1
fi

echo "dist: third-party licences (go-licenses)"
"$work/licenses" -go-licenses "$work/go-licenses" -o "$work/licenses-gui" ./cmd/gpucanary
"$work/licenses" -go-licenses "$work/go-licenses" -tags nogui -o "$work/licenses-cli" ./cmd/gpucanary

echo "dist: Debian, RPM and Arch packages (nfpm)"
"$work/debs" -formats deb,rpm,archlinux -version "$VERSION" -commit "$COMMIT" -date "$BUILD_DATE" -maintainer "$MAINTAINER" \
  -gui "$work/bin/gpucanary" -cli "$work/bin/gpucanary-cli" \
  -gui-licenses "$work/licenses-gui" -cli-licenses "$work/licenses-cli" -o "$out"

name=gpucanary-$VERSION-linux-amd64
echo "dist: $name.tar.gz"
stage=$work/$name
mkdir -p "$stage/bin" "$stage/scripts" "$stage/third_party_licenses"
cp "$work/bin/gpucanary" "$work/bin/gpucanary-cli" "$stage/bin/"
cp -r packaging "$stage/"
cp scripts/install.sh "$stage/scripts/"
cp README.md LICENSE "$stage/"
mkdir -p "$stage/docs" && cp docs/*.md "$stage/docs/"
# The tray binary links everything the CLI does and more; both sets are
# merged so the archive covers either binary.
cp -r "$work/licenses-cli/." "$work/licenses-gui/." "$stage/third_party_licenses/"
{
  head -n1 "$work/licenses-gui/licenses.tsv"
  tail -q -n+2 "$work/licenses-gui/licenses.tsv" "$work/licenses-cli/licenses.tsv" | sort -u
} >"$stage/third_party_licenses/licenses.tsv"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  -C "$work" -cf - "$name" | gzip -9n >"$out/$name.tar.gz"

[ "${KEEP_WORK:-}" = 1 ] || rm -rf "$work"
echo "dist: done in $out"
