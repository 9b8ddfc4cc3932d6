#!/usr/bin/env bash
# Prints GPU Canary's version for builds and packages, from the newest
# vX.Y.Z tag (git describe):
#   at the tag v0.2.0                      0.2.0
#   3 commits after it, at abc1234         0.2.0+3.gabc1234
#   with uncommitted changes               0.2.0+3.gabc1234.dirty
#   no tag yet                             0.0.0~git20251123.abc1234
# Every form is a valid Debian version that sorts the way releases do: a
# later commit after a later tag, and an untagged build before any release
# (the ~). Outside a git checkout it prints 0.0.0~dev.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo 0.0.0~dev
  exit 0
fi
dirty=
git diff --quiet HEAD -- 2>/dev/null || dirty=.dirty
if desc=$(git describe --tags --match 'v[0-9]*' --long 2>/dev/null); then
  # vX.Y.Z-N-gHASH; the tag itself may hold dashes (v1.0.0-rc1).
  hash=${desc##*-g}
  rest=${desc%-g*}
  n=${rest##*-}
  tag=${rest%-*}
  v=${tag#v}
  v=${v//-/\~} # a pre-release sorts before its release: 1.0.0~rc1 < 1.0.0
  if [ "$n" = 0 ]; then
    [ -n "$dirty" ] && v="$v+0.g$hash$dirty"
  else
    v="$v+$n.g$hash$dirty"
  fi
  echo "$v"
else
  echo "0.0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d).$(git rev-parse --short=7 HEAD)$dirty"
fi
