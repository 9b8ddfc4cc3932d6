#!/usr/bin/env bash
# Installs GPU Canary under PREFIX, or removes what an earlier install put
# there. Usage (make install / make uninstall call it; so can a user of the
# release archive, which has the same layout):
#   scripts/install.sh install          # for you: PREFIX=~/.local
#   sudo scripts/install.sh install     # for every user: PREFIX=/usr/local
#   PREFIX=/opt/gpucanary scripts/install.sh install
#   scripts/install.sh uninstall        # the same PREFIX as the install
# DESTDIR stages the files under another root (packagers); the paths written
# into the menu entry and the service stay those under PREFIX.
#
# What it installs, from the repository:
#   bin/gpucanary, bin/gpucanary-cli     -> PREFIX/bin
#   the menu entry                       -> PREFIX/share/applications/io.github.gpucanary.desktop
#   the icon, each hicolor size          -> PREFIX/share/icons/hicolor/NxN/apps/io.github.gpucanary.png
#   the systemd user unit (not enabled)  -> PREFIX/share/systemd/user (a PREFIX in HOME)
#                                           PREFIX/lib/systemd/user (else)
# and a manifest, PREFIX/share/gpucanary/install-manifest, of every file and
# of every folder it had to create. Uninstall removes exactly those (a
# folder only while empty) and nothing else: the settings
# (~/.config/gpucanary), the state and history (~/.local/state/gpucanary)
# and a Start-at-login entry made in Settings stay.
set -euo pipefail
cd "$(dirname "$0")/.."

id=io.github.gpucanary
action=${1:-}
if [ -z "${PREFIX:-}" ]; then
  if [ "$(id -u)" -eq 0 ]; then PREFIX=/usr/local; else PREFIX=${HOME:?HOME is not set}/.local; fi
fi
case $PREFIX in /*) ;; *) echo "install: PREFIX must be an absolute path, not $PREFIX" >&2; exit 2 ;; esac
PREFIX=${PREFIX%/}
DESTDIR=${DESTDIR:-}
DESTDIR=${DESTDIR%/}
BINDIR=${BINDIR:-bin}
manifest_rel=share/gpucanary/install-manifest
manifest=$DESTDIR$PREFIX/$manifest_rel

# desktop_exec quotes a path for a desktop entry's Exec key: in double
# quotes with " ` $ \ escaped by a backslash, every backslash doubled again
# by the string escape, and % written %% (Desktop Entry spec, "The Exec key").
desktop_exec() {
  local s=$1
  s=${s//\\/\\\\\\\\}
  s=${s//\"/\\\\\"}
  s=${s//\`/\\\\\`}
  s=${s//\$/\\\\\$}
  s=${s//%/%%}
  printf '"%s"' "$s"
}

# systemd_exec quotes a path for ExecStart: in double quotes with " and \
# escaped, % written %% (systemd.service, "Command lines"; systemd.unit, "Specifiers").
systemd_exec() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//%/%%}
  printf '"%s"' "$s"
}

unit_dir() {
  case $PREFIX/ in
    "${HOME:-/nonexistent}"/*) echo "$PREFIX/share/systemd/user" ;; # $XDG_DATA_HOME/systemd/user for ~/.local
    *) echo "$PREFIX/lib/systemd/user" ;;
  esac
}

tmp=
declare -a new_files=() new_dirs=() old_files=() old_dirs=()

read_manifest() {
  [ -f "$manifest" ] || return 0
  local line
  while IFS= read -r line; do
    case $line in
      "f "*) old_files+=("${line#f }") ;;
      "d "*) old_dirs+=("${line#d }") ;;
    esac
  done <"$manifest"
}

# mkdirs creates the folder $1 (a path under PREFIX) and its missing
# parents, recording each one it created.
mkdirs() {
  local d=$1 missing=()
  while [ "$d" != / ] && [ ! -d "$DESTDIR$d" ]; do
    missing=("$d" "${missing[@]}")
    d=$(dirname "$d")
  done
  local m
  for m in "${missing[@]}"; do
    mkdir -m 0755 -p "$DESTDIR$m"
    new_dirs+=("$m")
  done
}

# put installs the file $1 at the path $3 under PREFIX with mode $2.
put() {
  local src=$1 mode=$2 dst=$3
  mkdirs "$(dirname "$dst")"
  install -m "$mode" -T "$src" "$DESTDIR$dst"
  new_files+=("$dst")
}

in_list() {
  local x=$1; shift
  local y
  for y in "$@"; do [ "$x" = "$y" ] && return 0; done
  return 1
}

# remove_dirs removes the recorded folders that are empty, deepest first.
remove_dirs() {
  local d
  printf '%s\n' "$@" | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2- | while IFS= read -r d; do
    [ -n "$d" ] && rmdir "$DESTDIR$d" 2>/dev/null || true
  done
}

do_install() {
  local b
  for b in gpucanary gpucanary-cli; do
    if [ ! -x "$BINDIR/$b" ]; then
      echo "install: $BINDIR/$b is missing: run make build cli first (as yourself, before sudo make install)" >&2
      exit 1
    fi
  done
  case $PREFIX in *$'\n'*) echo "install: PREFIX holds a newline" >&2; exit 2 ;; esac
  read_manifest
  # Folders an earlier install created are still this install's to remove.
  new_dirs=("${old_dirs[@]}")

  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT

  put "$BINDIR/gpucanary" 0755 "$PREFIX/bin/gpucanary"
  put "$BINDIR/gpucanary-cli" 0755 "$PREFIX/bin/gpucanary-cli"

  # The menu entry names the installed program by its full path, so it
  # starts without PREFIX/bin on the desktop session's PATH. (awk reads the
  # values from ENVIRON: -v would expand their backslashes.)
  local exe=$PREFIX/bin/gpucanary
  EXEC=$(desktop_exec "$exe") TRYEXEC=${exe//\\/\\\\} awk '
    /^Exec=/ { print "Exec=" ENVIRON["EXEC"]; next }
    /^TryExec=/ { print "TryExec=" ENVIRON["TRYEXEC"]; next }
    { print }' "packaging/linux/$id.desktop" >"$tmp/$id.desktop"
  put "$tmp/$id.desktop" 0644 "$PREFIX/share/applications/$id.desktop"

  local icon size
  for icon in packaging/linux/icons/hicolor/*/apps/$id.png; do
    size=$(basename "$(dirname "$(dirname "$icon")")")
    put "$icon" 0644 "$PREFIX/share/icons/hicolor/$size/apps/$id.png"
  done

  local start
  start="$(systemd_exec "$PREFIX/bin/gpucanary-cli") watch"
  START=$start awk '/^ExecStart=/ { print "ExecStart=" ENVIRON["START"]; next } { print }' \
    packaging/linux/gpucanary-watch.service >"$tmp/gpucanary-watch.service"
  put "$tmp/gpucanary-watch.service" 0644 "$(unit_dir)/gpucanary-watch.service"

  # Files of an earlier install that this one no longer puts.
  local f
  for f in "${old_files[@]}"; do
    in_list "$f" "${new_files[@]}" || rm -f "$DESTDIR$f"
  done

  mkdirs "$(dirname "$PREFIX/$manifest_rel")"
  {
    printf '# GPU Canary install manifest: what `make uninstall` removes (f: file, d: folder it created)\n'
    printf 'f %s\n' "${new_files[@]}" "$PREFIX/$manifest_rel"
    printf 'd %s\n' "${new_dirs[@]}"
  } >"$manifest.tmp"
  mv "$manifest.tmp" "$manifest"

  echo "Installed GPU Canary in $PREFIX (the list is in $PREFIX/$manifest_rel):"
  echo "  $PREFIX/bin/gpucanary, $PREFIX/bin/gpucanary-cli"
  echo "  the menu entry $PREFIX/share/applications/$id.desktop and its icons"
  echo "  the user service $(unit_dir)/gpucanary-watch.service (not enabled)"
  case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "Note: $PREFIX/bin is not on your PATH." ;; esac
  echo "Start it from the application menu; Settings has \"Start at login\"."
}

do_uninstall() {
  if [ ! -f "$manifest" ]; then
    echo "uninstall: no install manifest at $manifest: nothing installed in $PREFIX by make install" >&2
    exit 1
  fi
  read_manifest
  local f
  for f in "${old_files[@]}"; do
    case $f in "$PREFIX"/*) rm -f "$DESTDIR$f" ;; *) echo "uninstall: skipping $f: outside $PREFIX" >&2 ;; esac
  done
  local d inside=()
  for d in "${old_dirs[@]}"; do
    case $d in "$PREFIX"/*) inside+=("$d") ;; esac
  done
  remove_dirs "${inside[@]}"
  echo "Removed GPU Canary from $PREFIX."
  echo "Kept your settings (${XDG_CONFIG_HOME:-~/.config}/gpucanary) and state and history (${XDG_STATE_HOME:-~/.local/state}/gpucanary): delete those folders to forget them."
  local autostart=${XDG_CONFIG_HOME:-${HOME:-}/.config}/autostart/$id.desktop
  if [ -f "$autostart" ]; then
    echo "Start at login is still on ($autostart) and points at the removed program: delete that file, or turn it off in Settings before you uninstall."
  fi
}

case $action in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: [PREFIX=DIR] $0 install|uninstall" >&2; exit 2 ;;
esac
