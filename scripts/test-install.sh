#!/usr/bin/env bash
# Tests `make install` and `make uninstall` for real, into a throwaway HOME
# whose path has a space, $, `, " and \ in it (quoted in the menu entry
# and the unit):
#  - every file lands where the desktop looks (bin, applications, hicolor,
#    systemd/user), desktop-file-validate accepts the entry, and the
#    installed programs run;
#  - the entry is found and launched as a menu does and its tray registers
#    (scripts/menu-entry-check.sh);
#  - a second install over the first changes nothing but the files;
#  - uninstall leaves HOME exactly as it was before the install, settings,
#    history and a file of another program in ~/.local/bin included;
#  - PREFIX=... (the /usr/local case) behaves the same.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export LANG=C.UTF-8
for tool in desktop-file-validate; do
  command -v "$tool" >/dev/null || { echo "test-install: $tool is missing (make deps-test installs it)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-install: $*" >&2; exit 1; }

# The binaries as the end-to-end test builds them (its build cache is warm).
mkdir -p "$tmp/bin"
$GO build -o "$tmp/bin/gpucanary" ./cmd/gpucanary
$GO build -tags nogui -o "$tmp/bin/gpucanary-cli" ./cmd/gpucanary

home="$tmp/home of a \$user \`with\` \\odd \"name"
mkdir -p "$home/.local/bin" "$home/.config" "$home/.local/state"
# GPU Canary's own folders, as it makes them (private: 0700); an older
# 0755 one is tightened on first write, which store's tests cover.
mkdir -m 700 "$home/.config/gpucanary" "$home/.local/state/gpucanary"
echo other >"$home/.local/bin/other-tool"
printf 'refresh = "5s"\n' >"$home/.config/gpucanary/config.toml"
echo '{}' >"$home/.local/state/gpucanary/history.jsonl"
# The state folder as GPU Canary makes it (0700: it holds other processes'
# command lines); the launched tray would otherwise make it so.
chmod 700 "$home/.local/state/gpucanary"
snapshot() { (cd "$1" && find . -printf '%y %m %p\n' | LC_ALL=C sort) }
before=$(snapshot "$tmp")

inst() { # make install|uninstall as this user, with the binaries above
  # PREFIX goes in the environment: make would expand the $ on its command line.
  HOME=$home PREFIX=${2:-} BINDIR=$tmp/bin make -s --no-print-directory "$1" INSTALL_NEEDS=
}
# As root, make install's default PREFIX is /usr/local: name the user's.
prefix=$home/.local
inst install "$prefix" >"$tmp/install.log"
grep -qF "Installed GPU Canary in $prefix" "$tmp/install.log" || fail "install said: $(cat "$tmp/install.log")"

want=(bin/gpucanary bin/gpucanary-cli share/applications/io.github.gpucanary.desktop
  share/systemd/user/gpucanary-watch.service share/gpucanary/install-manifest)
for s in 16 22 24 32 48 64 128 256; do want+=("share/icons/hicolor/${s}x$s/apps/io.github.gpucanary.png"); done
for f in "${want[@]}"; do [ -f "$prefix/$f" ] || fail "install did not put $prefix/$f"; done
got=$(cd "$prefix" && find . -type f ! -name other-tool ! -path './state/*' | sed 's|^\./||' | LC_ALL=C sort)
[ "$got" = "$(printf '%s\n' "${want[@]}" | LC_ALL=C sort)" ] || fail "install put other files: $got"
desktop-file-validate "$prefix/share/applications/io.github.gpucanary.desktop"
unit_path=${prefix//\\/\\\\}
unit_path=${unit_path//\"/\\\"}
grep -qxF "ExecStart=\"$unit_path/bin/gpucanary-cli\" watch" "$prefix/share/systemd/user/gpucanary-watch.service" ||
  fail "the unit does not start the installed CLI: $(grep ExecStart "$prefix/share/systemd/user/gpucanary-watch.service")"
"$prefix/bin/gpucanary" --version | grep -q '^gpucanary ' || fail "the installed gpucanary does not run"
HOME=$home "$prefix/bin/gpucanary-cli" check --json >"$tmp/check.json" || [ $? = 1 ] || fail "installed gpucanary-cli check failed"
grep -q '"gpu"' "$tmp/check.json" || fail "check --json printed: $(cat "$tmp/check.json")"

env HOME="$home" XDG_DATA_HOME= XDG_CONFIG_HOME= XDG_DATA_DIRS=/usr/share LANG=C.UTF-8 \
  scripts/menu-entry-check.sh "$prefix/bin/gpucanary"

# Installing again over the first install: the same files, the same manifest.
cp "$prefix/share/gpucanary/install-manifest" "$tmp/manifest1"
inst install "$prefix" >/dev/null
cmp -s "$tmp/manifest1" "$prefix/share/gpucanary/install-manifest" || fail "a second install changed the manifest"

inst uninstall "$prefix" >"$tmp/uninstall.log"
grep -q "Kept your settings" "$tmp/uninstall.log" || fail "uninstall said: $(cat "$tmp/uninstall.log")"
after=$(snapshot "$tmp")
# The test's own files (bin, logs) are not install's, and the launched
# tray's state files are history that uninstall must keep (checked below),
# beside the lock a running engine holds on the folder; what the programs
# run above cached in the user's cache folder (the CUDA kernels, the file
# facts) is theirs, not install's, and a cache uninstall leaves alone.
filter() { grep -v -e ' \./bin' -e '\.log$' -e 'check\.json$' -e 'manifest1$' -e ' \.$' -e '/\.local/state/gpucanary/[a-z]*\.json$' -e '/\.local/state/gpucanary/[a-z]*\.lock$' -e '/\.cache$' -e '/\.cache/gpucanary\(/\|$\)'; }
diff <(filter <<<"$before") <(filter <<<"$after") || fail "uninstall left HOME different from before the install (above)"
[ -s "$home/.local/state/gpucanary/state.json" ] || fail "uninstall removed the state the launched tray wrote"
grep -q refresh "$home/.config/gpucanary/config.toml" || fail "uninstall touched the settings"
inst uninstall "$prefix" 2>/dev/null && fail "a second uninstall did not fail: nothing was installed"

# A machine-wide PREFIX (sudo make install PREFIX=/usr/local): lib/systemd/user.
sys=$tmp/usr/local
mkdir -p "$sys"
inst install "$sys" >/dev/null
[ -f "$sys/lib/systemd/user/gpucanary-watch.service" ] || fail "no unit in $sys/lib/systemd/user"
desktop-file-validate "$sys/share/applications/io.github.gpucanary.desktop"
inst uninstall "$sys" >/dev/null
[ -z "$(ls -A "$sys")" ] || fail "uninstall left in $sys: $(cd "$sys" && find .)"
echo "test-install: install, menu launch, reinstall and uninstall into a throwaway HOME and PREFIX passed"
