#!/usr/bin/env bash
# Tests the release pipeline for real (make test-packages):
#  1. scripts/dist.sh, as make dist runs it, builds the archive, both
#     .debs, both RPMs and both Arch packages; lintian checks the .debs,
#     scripts/test-rpm-arch.sh the others.
#  2. The .debs are installed with dpkg into a throwaway root (dpkg --root):
#     its status file holds this machine's entries for the packages they
#     depend on, so dpkg checks the Depends that dpkg-shlibdeps derived
#     against real packages. The installed programs run from their
#     installed paths, dpkg -L lists every file, the menu entry is found
#     and launched as a menu does and its tray registers, and after dpkg -r
#     and --purge nothing is left in the root.
#  3. The release archive unpacks to what its install script needs.
#  4. The CGO_ENABLED=0 question, in minimal roots (chroot): the cgo CLI
#     needs glibc's loader and libc and nothing else, and loads
#     libnvidia-ml.so.1 at run time; a static build runs anywhere but has
#     no NVML at all (go-nvml is cgo), so it is not shipped.
# The binaries are built with the end-to-end test's flags (its build cache
# is warm; -trimpath -buildmode=pie, what make dist uses, would compile
# every package once more, about 5 minutes on 2 cores): lintian's
# hardening-no-pie is expected here and only here.
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=C.UTF-8
GO=${GO:-go}
for tool in dpkg dpkg-deb dpkg-shlibdeps lintian desktop-file-validate gcc rpm bsdtar wixl msiinfo faketime; do
  command -v "$tool" >/dev/null || { echo "test-packages: $tool is missing (make deps-test installs it)"; exit 1; }
done
fail() { echo "test-packages: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export VERSION=${VERSION:-$(scripts/version.sh)}
export COMMIT=${COMMIT:-$(git rev-parse --short=7 HEAD)}
export BUILD_DATE=${BUILD_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
export LDFLAGS=${LDFLAGS:-"-s -w -X main.version=$VERSION -X main.commit=$COMMIT -X main.buildDate=$BUILD_DATE"}
export BUILDFLAGS=

# 0. The packaging programs' own tests (scripts/release is a module of its own;
# its msi package builds the MSI with wixl and reads its tables back).
$GO -C scripts/release vet ./...
$GO -C scripts/release test -race -count=1 ./...

# scripts/version.sh in a repository of its own: each form, and that dpkg
# orders them as releases go.
repo=$tmp/version-repo
mkdir -p "$repo/scripts"
cp scripts/version.sh "$repo/scripts/"
git -C "$repo" init -q
vgit() { git -C "$repo" -c user.name=t -c user.email=t@example.com "$@"; }
vcommit() { echo "$1" >"$repo/f"; vgit add -A; GIT_COMMITTER_DATE="2025-11-2${2}T10:00:00Z" vgit commit -qm "$1"; }
v() { "$repo/scripts/version.sh"; }
vcommit one 1
untagged=$(v)
[ "$untagged" = "0.0.0~git20251121.$(vgit rev-parse --short=7 HEAD)" ] || fail "version.sh before any tag: $untagged"
vgit tag v1.0.0-rc1
rc1=$(v)
vcommit two 2
vgit tag v1.0.0
release=$(v)
vcommit three 3
after=$(v)
echo dirty >>"$repo/f"
dirty=$(v)
[ "$rc1 $release" = "1.0.0~rc1 1.0.0" ] || fail "version.sh at tags: $rc1, $release"
[ "$after" = "1.0.0+1.g$(vgit rev-parse --short=7 HEAD)" ] || fail "version.sh after a tag: $after"
[ "$dirty" = "$after.dirty" ] || fail "version.sh with changes: $dirty"
prev=
for x in "$untagged" "$rc1" "$release" "$after" "$dirty"; do
  [ -z "$prev" ] || dpkg --compare-versions "$prev" lt "$x" || fail "dpkg orders $prev after $x"
  prev=$x
done

# 1. The release files.
KEEP_WORK=1 scripts/dist.sh "$tmp/dist" >"$tmp/dist.log" 2>&1 || { cat "$tmp/dist.log"; fail "scripts/dist.sh failed"; }
work=$tmp/dist/.work
gui_deb=$tmp/dist/gpucanary_${VERSION}-1_amd64.deb
cli_deb=$tmp/dist/gpucanary-cli_${VERSION}-1_amd64.deb
tarball=$tmp/dist/gpucanary-$VERSION-linux-amd64.tar.gz
for f in "$gui_deb" "$cli_deb" "$tarball"; do [ -f "$f" ] || fail "dist made no $f: $(ls "$tmp/dist")"; done

# The Depends are dpkg-shlibdeps' reading of the binaries: the tray needs
# libGL and libX11, the CLI only libc.
gui_depends=$(dpkg-deb -f "$gui_deb" Depends)
cli_depends=$(dpkg-deb -f "$cli_deb" Depends)
for d in libc6 libgl1 libx11-6 "gpucanary-cli (= $VERSION-1)"; do
  grep -qF "$d" <<<"$gui_depends" || fail "gpucanary does not depend on $d: $gui_depends"
done
grep -qE '^libc6 \(>= [0-9.]+\)$' <<<"$cli_depends" || fail "gpucanary-cli depends on more than libc6: $cli_depends"

# lintian: every error and warning fails but these, each for its reason:
#  no-manual-page   the commands' help is in --help and the README; a man
#                   page made from the command registry is a follow-up
#  initial-upload-closes-no-bugs  an upload to Debian's archive closes its
#                   ITP bug; these packages are not uploaded there
#  hardening-no-pie this test's build only (see the top); make dist builds PIE
lintian --fail-on error,warning --suppress-tags no-manual-page,initial-upload-closes-no-bugs,hardening-no-pie "$gui_deb" "$cli_deb" >"$tmp/lintian.log" 2>&1 ||
  { cat "$tmp/lintian.log"; fail "lintian"; }

# The RPM and Arch packages from the same description.
scripts/test-rpm-arch.sh "$tmp/dist" "$work"

# 2. dpkg into a throwaway root.
root=$tmp/root
admin=$root/var/lib/dpkg
mkdir -p "$admin/info" "$admin/updates"
touch "$admin/available"
deps=$( (echo "$gui_depends"; echo "$cli_depends") | tr ',' '\n' | sed -E 's/^ *([^ ]+).*/\1/' | grep -v '^gpucanary' | sort -u)
for p in $deps; do
  dpkg-query -s "$p" >>"$admin/status" 2>/dev/null || fail "this machine lacks $p, which the package depends on"
  echo >>"$admin/status"
done
dpkg_root() {
  if [ "$(id -u)" -eq 0 ]; then dpkg --root="$root" "$@"; else fakeroot dpkg --root="$root" --force-not-root "$@"; fi
}
dpkg_root --install "$cli_deb" "$gui_deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --install"; }
dpkg_root --status gpucanary | grep -qx 'Status: install ok installed' || fail "gpucanary is not installed: $(dpkg_root --status gpucanary)"

version_line=$("$root/usr/bin/gpucanary" --version 2>/dev/null)
grep -qF "gpucanary $VERSION (commit $COMMIT, built $BUILD_DATE" <<<"$version_line" || fail "gpucanary --version: $version_line"
home=$tmp/home
mkdir -p "$home"
rc=0
HOME=$home "$root/usr/bin/gpucanary-cli" check --json >"$tmp/check.json" || rc=$?
[ "$rc" -le 1 ] || fail "gpucanary-cli check --json exited $rc"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert "gpu" in d and "envs" in d, d' "$tmp/check.json" ||
  fail "check --json printed: $(cat "$tmp/check.json")"

# The CLI writes the metrics itself: no other program is installed for them.
HOME=$home "$root/usr/bin/gpucanary-cli" check --format prom >"$tmp/check.prom" || [ $? = 1 ] || fail "gpucanary-cli check --format prom failed"
grep -q '^gpucanary_build_info{' "$tmp/check.prom" || fail "check --format prom printed: $(cat "$tmp/check.prom")"

listed=$( (dpkg_root -L gpucanary; dpkg_root -L gpucanary-cli) | LC_ALL=C sort -u)
for f in /usr/bin/gpucanary /usr/bin/gpucanary-cli /usr/share/applications/io.github.gpucanary.desktop \
  /usr/share/icons/hicolor/48x48/apps/io.github.gpucanary.png /usr/lib/systemd/user/gpucanary-watch.service \
  /usr/share/doc/gpucanary/copyright /usr/share/doc/gpucanary-cli/copyright; do
  grep -qx "$f" <<<"$listed" || fail "dpkg -L does not list $f"
done
# One program per package: the tray and the CLI, nothing run in their stead.
bins=$(grep '^/usr/bin/' <<<"$listed" | tr '\n' ' ')
[ "$bins" = "/usr/bin/gpucanary /usr/bin/gpucanary-cli " ] || fail "the packages install these programs: $bins"
# Every file in the root is one dpkg lists.
unlisted=$(cd "$root" && find . -path ./var/lib/dpkg -prune -o -type f -print | sed 's|^\.||' | LC_ALL=C sort | comm -23 - <(echo "$listed"))
[ -z "$unlisted" ] || fail "files in the root that dpkg does not list: $unlisted"
desktop-file-validate "$root/usr/share/applications/io.github.gpucanary.desktop"
grep -qx 'ExecStart=/usr/bin/gpucanary-cli watch' "$root/usr/lib/systemd/user/gpucanary-watch.service" || fail "the unit's ExecStart"
grep -q 'fyne.io/fyne/v2 .*BSD-3-Clause' "$root/usr/share/doc/gpucanary/copyright" || fail "the copyright file lists no Fyne"
grep -q 'fyne.io/fyne/v2' "$root/usr/share/doc/gpucanary-cli/copyright" && fail "the CLI's copyright file lists Fyne, which it does not link"

env HOME="$home" PATH="$root/usr/bin:$PATH" XDG_DATA_HOME="$home/.local/share" XDG_DATA_DIRS="$root/usr/share" \
  scripts/menu-entry-check.sh "$root/usr/bin/gpucanary"

dpkg_root --remove gpucanary gpucanary-cli >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --remove"; }
dpkg_root --purge gpucanary gpucanary-cli >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --purge"; }
left=$(cd "$root" && find . -mindepth 1 -path ./var -prune -o -print)
[ -z "$left" ] || fail "dpkg --purge left: $left"
left=$(cd "$admin/info" && ls | grep '^gpucanary' || true)
[ -z "$left" ] || fail "dpkg --purge left in its database: $left"
dpkg_root --status gpucanary >/dev/null 2>&1 && fail "gpucanary is still known after --purge"

# 3. The release archive.
mkdir "$tmp/unpacked"
tar -xzf "$tarball" -C "$tmp/unpacked"
top=$tmp/unpacked/gpucanary-$VERSION-linux-amd64
for f in bin/gpucanary bin/gpucanary-cli scripts/install.sh packaging/linux/io.github.gpucanary.desktop \
  packaging/linux/icons/hicolor/256x256/apps/io.github.gpucanary.png packaging/linux/gpucanary-watch.service \
  README.md docs/codes.md LICENSE third_party_licenses/licenses.tsv third_party_licenses/go/LICENSE \
  third_party_licenses/fyne.io/fyne/v2/LICENSE third_party_licenses/fyne.io/fyne/v2/theme/font/LICENSE_Inter.txt; do
  [ -f "$top/$f" ] || fail "the archive lacks $f"
done
"$top/bin/gpucanary-cli" --version | grep -qF "gpucanary $VERSION" || fail "the archive's CLI: $("$top/bin/gpucanary-cli" --version)"
HOME=$home PREFIX=$tmp/from-archive "$top/scripts/install.sh" install >/dev/null
[ -x "$tmp/from-archive/bin/gpucanary" ] || fail "the archive's install script installed nothing"
HOME=$home PREFIX=$tmp/from-archive "$top/scripts/install.sh" uninstall >/dev/null
[ -z "$(ls -A "$tmp/from-archive")" ] || fail "the archive's uninstall left files"

# 4. Minimal roots: what the CLI needs, and why a static one is not shipped.
scripts/test-minimal-root.sh "$work/bin/gpucanary-cli"

echo "test-packages: dist, lintian, RPM and Arch packages, dpkg install/run/-L/purge, menu launch, archive and minimal roots passed"
