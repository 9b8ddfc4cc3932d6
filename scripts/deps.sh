#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages GPU Canary needs to build and test,
# skipping those already installed. Usage: scripts/deps.sh build|test|windows
# On other systems it prints the packages and stops.
set -euo pipefail

build=(gcc pkg-config libgl1-mesa-dev xorg-dev libxkbcommon-dev)
test=(xvfb x11-utils dbus-x11 dunst adwaita-icon-theme haskell-status-notifier-item-utils imagemagick xdotool time
      python3 python3-venv python3-pip python3-psutil python3-torch
      wine64 gcc-mingw-w64-x86-64)
# The agent's tests and benchmark: promtool and a real Prometheus, node_exporter as the peer.
test+=(prometheus prometheus-node-exporter curl)
# make dist: dpkg-shlibdeps (dpkg-dev) derives the Debian packages' Depends.
build+=(dpkg-dev)
# make dist: rpm's ELF dependency generator (/usr/lib/rpm/elfdeps) derives
# the RPMs' Requires; test-packages installs the RPMs with rpm and the
# Arch packages with pacman (pacman-package-manager), orders versions with
# vercmp (makepkg) and reads .PKGINFO with bsdtar (libarchive-tools).
build+=(rpm)
test+=(libarchive-tools pacman-package-manager makepkg)
# make test-install, test-packages: lintian and desktop-file-validate check
# the packages and the menu entry; GLib (python3-gi) finds and launches it.
test+=(lintian desktop-file-utils python3-gi gir1.2-glib-2.0)
# make windows and dist-windows: the cross compiler and the zip.
windows=(gcc-mingw-w64-x86-64 zip)
test+=(zip)
# The MSI: wixl builds it, msibuild (msitools) sets its package code,
# faketime gives wixl the build date; msiinfo (msitools) reads it back.
windows+=(wixl msitools faketime)
test+=(wixl msitools faketime)

want=("${build[@]}")
[ "${1:-build}" = test ] && want+=("${test[@]}")
[ "${1:-build}" = windows ] && want+=("${windows[@]}")

if ! command -v go >/dev/null 2>&1; then
  echo "deps: Go is not installed; install Go 1.24 or newer from https://go.dev/dl/ and run make again." >&2
  exit 1
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "deps: this is not a Debian/Ubuntu system; install the equivalents of: ${want[*]}" >&2
  exit 1
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "deps: missing packages: ${missing[*]}" >&2
  echo "deps: run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "deps: installing the missing Debian packages with apt-get (a minute or more on a fresh machine): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
