#!/usr/bin/env bash
# Checks the RPM and Arch packages scripts/dist.sh built (test-packages.sh
# runs it on its dist folder):
#  - rpm -qpl and -qpR: each RPM's files, licences (%license) and Requires,
#    which rpm's ELF generator derived from the binaries (the tray: libGL,
#    libX11, glibc's symbol versions, and gpucanary-cli of the same
#    version; the CLI: glibc only);
#  - each Arch package's .PKGINFO (bsdtar): name, version, depends, and the
#    files it holds;
#  - the RPMs install into a throwaway root with rpm, the Arch packages
#    into another with pacman; the programs start from the installed
#    files, and removal leaves no file behind;
#  - rpm orders scripts/version.sh's forms as dpkg does, and pacman's
#    vercmp the Arch versions, which drop ~ and +;
#  - the packaging step gives the same bytes when run again on the same
#    binaries and date (the binaries' own reproducibility is Go's).
# Usage: scripts/test-rpm-arch.sh DIST WORK (WORK: dist.sh's KEEP_WORK folder)
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:?usage: scripts/test-rpm-arch.sh DIST WORK}
work=${2:?usage: scripts/test-rpm-arch.sh DIST WORK}
: "${VERSION:?}" "${BUILD_DATE:?}"
for tool in rpm bsdtar pacman vercmp; do
  command -v "$tool" >/dev/null || { echo "test-rpm-arch: $tool is missing (make deps-test installs rpm, libarchive-tools, pacman-package-manager and makepkg)"; exit 1; }
done
fail() { echo "test-rpm-arch: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

aversion=$(tr -d '~' <<<"$VERSION" | tr '+' '.')
gui_rpm=$dist/gpucanary-$VERSION-1.x86_64.rpm
cli_rpm=$dist/gpucanary-cli-$VERSION-1.x86_64.rpm
gui_arch=$dist/gpucanary-$aversion-1-x86_64.pkg.tar.zst
cli_arch=$dist/gpucanary-cli-$aversion-1-x86_64.pkg.tar.zst
for f in "$gui_rpm" "$cli_rpm" "$gui_arch" "$cli_arch"; do [ -f "$f" ] || fail "dist made no $f: $(ls "$dist")"; done

# The files: the tray's and the CLI's, as in the .debs, with the licences
# where each distribution keeps them.
gui_files="/usr/bin/gpucanary
/usr/share/applications/io.github.gpucanary.desktop
/usr/share/icons/hicolor/256x256/apps/io.github.gpucanary.png
/usr/share/icons/hicolor/48x48/apps/io.github.gpucanary.png
/usr/share/licenses/gpucanary/LICENSE
/usr/share/licenses/gpucanary/THIRD_PARTY_LICENSES"
cli_files="/usr/bin/gpucanary-cli
/usr/lib/systemd/user/gpucanary-watch.service
/usr/share/licenses/gpucanary-cli/LICENSE
/usr/share/licenses/gpucanary-cli/THIRD_PARTY_LICENSES"
has_all() { # LISTING WANTED WHAT
  local f
  while read -r f; do grep -qx "$f" <<<"$1" || fail "$3 lacks $f: $1"; done <<<"$2"
}
has_all "$(rpm -qpl "$gui_rpm")" "$gui_files" "rpm -qpl gpucanary"
has_all "$(rpm -qpl "$cli_rpm")" "$cli_files" "rpm -qpl gpucanary-cli"
rpm -qpl "$cli_rpm" | grep -q '^/usr/bin/gpucanary$' && fail "the CLI's RPM holds the tray"
[ "$(rpm -qpL "$gui_rpm" | wc -l)" = 2 ] || fail "the tray's RPM marks these as licences: $(rpm -qpL "$gui_rpm")"
rpm -qp --qf '%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{LICENSE}\n' "$gui_rpm" | grep -qx "gpucanary $VERSION 1 x86_64 Apache-2.0" ||
  fail "the tray's RPM header: $(rpm -qpi "$gui_rpm")"

gui_req=$(rpm -qpR "$gui_rpm")
cli_req=$(rpm -qpR "$cli_rpm")
for r in 'libGL.so.1()(64bit)' 'libX11.so.6()(64bit)' 'libc.so.6()(64bit)' "gpucanary-cli = $VERSION-1"; do
  grep -qxF "$r" <<<"$gui_req" || fail "the tray's RPM does not require $r: $gui_req"
done
grep -qE '^libc\.so\.6\(GLIBC_2\.[0-9]+\)\(64bit\)$' <<<"$cli_req" || fail "the CLI's RPM names no glibc symbol version: $cli_req"
other=$(grep -vE '^(libc\.so\.6|rtld\(GNU_HASH\)|rpmlib\()' <<<"$cli_req" || true)
[ -z "$other" ] || fail "the CLI's RPM requires more than glibc: $other"

# Arch: .PKGINFO and the files.
pkginfo() { bsdtar -xOf "$1" .PKGINFO; }
gui_info=$(pkginfo "$gui_arch")
cli_info=$(pkginfo "$cli_arch")
for l in "pkgname = gpucanary" "pkgver = $aversion-1" "arch = x86_64" "license = Apache-2.0" \
  "depend = glibc" "depend = libglvnd" "depend = libx11" "depend = gpucanary-cli=$aversion-1"; do
  grep -qxF "$l" <<<"$gui_info" || fail "the tray's .PKGINFO lacks '$l': $gui_info"
done
[ "$(grep '^depend = ' <<<"$cli_info")" = "depend = glibc" ] || fail "the CLI's .PKGINFO depends: $(grep depend <<<"$cli_info")"
grep -qxF "pkgver = $aversion-1" <<<"$cli_info" || fail "the CLI's .PKGINFO version: $cli_info"
has_all "$(bsdtar -tf "$gui_arch" | grep -v '/$' | sed 's|^|/|')" "$gui_files" "the tray's Arch package"
has_all "$(bsdtar -tf "$cli_arch" | grep -v '/$' | sed 's|^|/|')" "$cli_files" "the CLI's Arch package"

# The programs start from the installed files: the RPMs installed by rpm
# and the Arch packages by pacman (Debian's pacman-package-manager), each
# into a throwaway root, without the dependency check (the roots hold no
# glibc package; the dependencies are checked above). (rpm2cpio is no use here: it exits 1 on nfpm's RPMs, whose
# archive-size tag counts the files without their cpio headers; rpm
# itself checks the payload's digest instead, and installs them.)
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else fakeroot "$@"; fi; }
rpm_root() { as_root rpm --root "$tmp/rpm" --dbpath /var/lib/rpm "$@"; }
pacman_root() { as_root pacman --root "$tmp/arch" --dbpath "$tmp/arch/var/lib/pacman" --cachedir "$tmp/arch/var/cache/pacman" --config /dev/null --noconfirm "$@"; }
mkdir -p "$tmp/rpm" "$tmp/arch/var/lib/pacman" "$tmp/arch/var/cache/pacman"
rpm_root --initdb
rpm_root -i --nodeps "$cli_rpm" "$gui_rpm" 2>&1 | grep -v 'use Alien\|what you are doing' || true
[ "$(rpm_root -qa | sort | tr '\n' ' ')" = "gpucanary-$VERSION-1.x86_64 gpucanary-cli-$VERSION-1.x86_64 " ] || fail "rpm -qa in the root: $(rpm_root -qa)"
rpm_root -V --nodeps gpucanary gpucanary-cli || fail "rpm -V: the installed files differ from the packages"
pacman_root -U -dd "$cli_arch" "$gui_arch" >"$tmp/pacman.log" 2>&1 || { cat "$tmp/pacman.log"; fail "pacman -U"; }
[ "$(pacman_root -Q | tr '\n' ' ')" = "gpucanary $aversion-1 gpucanary-cli $aversion-1 " ] || fail "pacman -Q in the root: $(pacman_root -Q)"
pacman_root -Qkk gpucanary gpucanary-cli >"$tmp/pacman.log" 2>&1 || { cat "$tmp/pacman.log"; fail "pacman -Qkk: the installed files differ from the packages"; }
for kind in rpm arch; do
  root=$tmp/$kind
  for b in gpucanary-cli gpucanary; do
    out=$("$root/usr/bin/$b" --version 2>&1) || fail "$kind: $b --version: $out"
    grep -qF "gpucanary $VERSION" <<<"$out" || fail "$kind: $b --version printed: $out"
  done
  grep -qx 'ExecStart=/usr/bin/gpucanary-cli watch' "$root/usr/lib/systemd/user/gpucanary-watch.service" || fail "$kind: the unit's ExecStart"
  grep -q 'Apache License' "$root/usr/share/licenses/gpucanary/LICENSE" || fail "$kind: the tray's LICENSE"
done
rpm_root -e gpucanary gpucanary-cli 2>&1 | grep -v 'use Alien\|what you are doing' || true
left=$(cd "$tmp/rpm" && find . -path ./var/lib/rpm -prune -o -type f -print)
[ -z "$left" ] || fail "rpm -e left: $left"
pacman_root -R gpucanary gpucanary-cli >"$tmp/pacman.log" 2>&1 || { cat "$tmp/pacman.log"; fail "pacman -R"; }
left=$(cd "$tmp/arch" && find . -path ./var -prune -o -type f -print)
[ -z "$left" ] || fail "pacman -R left: $left"

# Versions: rpm orders version.sh's forms (untagged, pre-release,
# release, after a tag, with changes) as they come, and pacman's vercmp
# (makepkg) the Arch forms, which have no ~ or +.
rpmvercmp() { rpm --eval "%{lua: print(rpm.vercmp('$1', '$2'))}"; }
forms=("0.0.0~git20251121.abc1234" "1.0.0~rc1" "1.0.0" "1.0.0+1.gdef5678" "1.0.0+1.gdef5678.dirty")
prev= aprev=
for v in "${forms[@]}"; do
  a=$(tr -d '~' <<<"$v" | tr '+' '.')
  if [ -n "$prev" ]; then
    [ "$(rpmvercmp "$prev" "$v")" = -1 ] || fail "rpm orders $prev after $v"
    [ "$(command vercmp "$aprev" "$a")" = -1 ] || fail "the Arch versions: $aprev is not before $a"
  fi
  prev=$v aprev=$a
done

# The packaging step again, on the same binaries and date: the same bytes.
"$work/debs" -formats rpm,archlinux -version "$VERSION" -commit "${COMMIT:-}" -date "$BUILD_DATE" -maintainer "${MAINTAINER:-GPU Canary maintainers <maintainers@gpucanary.invalid>}" \
  -gui "$work/bin/gpucanary" -cli "$work/bin/gpucanary-cli" \
  -gui-licenses "$work/licenses-gui" -cli-licenses "$work/licenses-cli" -o "$tmp/again" >/dev/null
for f in "$gui_rpm" "$cli_rpm" "$gui_arch" "$cli_arch"; do
  cmp -s "$f" "$tmp/again/$(basename "$f")" || fail "$(basename "$f") differs when built again from the same binaries and date"
done
echo "test-rpm-arch: RPM files and Requires, Arch .PKGINFO, rpm and pacman install/run/remove, version order, same bytes again"
