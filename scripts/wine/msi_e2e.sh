# End to end under wine, the MSI (sourced by scripts/test-windows.sh, after
# desktop_checks, whose run of scripts/dist-windows.sh built the MSI of the
# exes with resources into $work/dist): msiexec /i installs per user in
# %LOCALAPPDATA%\Programs\GPU Canary with the Start-menu shortcut, the
# product registered under HKCU\Software\Microsoft\Installer and one
# uninstall entry; a second MSI with a higher version and AUTOSTART=1
# replaces it in place (one entry, the new version, the Run-key value);
# msiexec /x removes every installed file, the shortcut, the entry and
# the Run-key value, and leaves %AppData%\gpucanary\config.toml. Between
# the install and the upgrade, app/shortcut's Windows test stamps the
# installed shortcut with the AppUserModelID, as the tray's first start
# does, and reads the .lnk back. Then the same MSI once more, per machine
# (ALLUSERS=1, msi_per_machine below): installed, stamped, removed.
#
# The tray is stopped before the upgrade and the uninstall replace its
# files: the package runs the installed `gpucanaryw.exe quit`, which asks
# the session's tray to quit through its named -quit event. The real tray
# needs a display and cgo's GL here, so monitor/instance's Windows test
# binary stands in for it: INSTANCE_CHILD=claim holds the session's mutex
# and events as the tray does (instance.Claim), says "quit asked" when
# asked, and gives them up and ends, as the tray does on Quit. Each must
# have ended when msiexec returns. LAUNCH=1 on the quiet first install
# starts the tray at its end (here the nogui build, which says it has no
# tray and ends); msiexec's log (/l*v) says LaunchTray ran then, and not
# on the quiet upgrade without it.
#
# Wine 8's msi writes every product's uninstall entry under HKLM, per-user
# ones too, where Windows writes a per-user product's under HKCU: the
# entry is looked for in both.

msi_fail() { echo "test-windows: msi: $1" >&2; [ -f "${2:-/dev/null}" ] && cat "$2"; failed+=("msi: $1"); }

# msi_entries: the uninstall entries named GPU Canary, one "KEY VERSION" a line.
msi_entries() {
  local root key
  for root in HKCU HKLM; do
    { "$wine" reg query "$root\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall" /s 2>/dev/null || true; } | tr -d '\r' |
      awk -v root="$root" '/^HKEY_/ {key=$0} /DisplayName +REG_SZ +GPU Canary$/ {hit[key]=1} /DisplayVersion +REG_SZ/ {ver[key]=$3}
        END {for (k in hit) print k, ver[k]}'
  done
}

# msi_hold: starts the stand-in tray (see above); msi_released checks that
# it was asked to quit and ended, and lets it go if not.
msi_hold() {
  rm -f "$work/holder.in" "$work/holder.out"
  mkfifo "$work/holder.in"
  INSTANCE_CHILD=claim INSTANCE_DIR=$(winpath "$work") "$wine" "$(testexe ./monitor/instance)" <"$work/holder.in" >"$work/holder.out" 2>&1 &
  msi_holder=$!
  exec {msi_holder_in}>"$work/holder.in"
  local i
  for i in $(seq 120); do
    grep -q '^ready' "$work/holder.out" && return 0
    kill -0 "$msi_holder" 2>/dev/null || break
    sleep 0.5
  done
  msi_fail "the stand-in tray did not claim the session" "$work/holder.out"
  msi_release
  return 1
}
msi_release() {
  exec {msi_holder_in}>&-
  wait "$msi_holder" 2>/dev/null || true
}
msi_released() { # what: "the upgrade", "msiexec /x"
  local i
  for i in $(seq 60); do
    kill -0 "$msi_holder" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$msi_holder" 2>/dev/null || ! tr -d '\r' <"$work/holder.out" | grep -qx 'quit asked'; then
    msi_fail "$1 did not stop the running tray (gpucanaryw.exe quit)" "$work/holder.out"
  fi
  msi_release
}
# msi_uninstall TARGET WHAT: with the stand-in tray running, msiexec /x
# TARGET (a package or {ProductCode}) quietly, checks that it asked the
# tray to quit, and that the folder $dir, the shortcut $lnk and every
# uninstall entry are gone. Non-zero when it could not run.
msi_uninstall() {
  msi_hold || return 1 # said why; the steps after need it
  if ! "$wine" msiexec /x "$1" /qn >"$out" 2>&1; then
    msi_release
    msi_fail "msiexec /x $2 failed" "$out"; return 1
  fi
  msi_released "msiexec /x $2"
  [ ! -e "$dir" ] || msi_fail "msiexec /x $2 left $(find "$dir" | tr '\n' ' ')"
  [ ! -e "$lnk" ] || msi_fail "msiexec /x $2 left the shortcut"
  [ -z "$(msi_entries)" ] || msi_fail "msiexec /x $2 left the uninstall entry: $(msi_entries)"
}
# msi_ran LOG ACTION: msiexec's log says ACTION ran.
msi_ran() { tr -d '\r' <"$1" | grep -q "^Action start .*: $2\.$"; }

msi_e2e() {
  local out=$work/msi.out
  local msi1=$work/dist/gpucanary-$desktop_version-x64.msi
  # The prefix's one profile (wine names it after $USER).
  local user
  user=$(ls -d "$WINEPREFIX"/drive_c/users/*/ | grep -v '/Public/$' | head -1)
  user=${user%/}
  local dir="$user/AppData/Local/Programs/GPU Canary"
  local lnk="$user/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/GPU Canary.lnk"
  local config=$user/AppData/Roaming/gpucanary/config.toml
  local v1 v2 f entries run
  [ -f "$msi1" ] || { msi_fail "scripts/dist-windows.sh built no $msi1"; return; }
  v1=$(sed -E 's/[~+].*//' <<<"$desktop_version")
  # The next version: the same exes, the last number one higher.
  v2=${v1%.*}.$((${v1##*.} + 1))
  mkdir -p "$work/msi2/licences"
  printf '# library\tversion\tlicence\ngo\tgo\tBSD-3-Clause\n' >"$work/msi2/licences/licenses.tsv"
  if ! EXES=$work/exes LICENCES=$work/msi2/licences VERSION=$desktop_version MSI_VERSION=$v2 \
    BUILD_DATE=2026-01-01T00:00:00Z scripts/dist-msi.sh "$work/msi2" >"$out" 2>&1; then
    msi_fail "scripts/dist-msi.sh (version $v2) failed" "$out"; return
  fi

  if ! "$wine" msiexec /i "$(winpath "$msi1")" /qn LAUNCH=1 /l*v "$(winpath "$work/msi-i1.log")" >"$out" 2>&1; then
    msi_fail "msiexec /i failed" "$out"; return
  fi
  msi_ran "$work/msi-i1.log" LaunchTray || msi_fail "LAUNCH=1 did not start the tray at the end of the install" "$work/msi-i1.log"
  for f in gpucanaryw.exe gpucanary.exe LICENSE.txt THIRD_PARTY_LICENSES.txt README.md; do
    [ -f "$dir/$f" ] || msi_fail "msiexec /i installed no $dir/$f"
  done
  [ -f "$lnk" ] || msi_fail "msiexec /i made no Start-menu shortcut $lnk"
  "$wine" reg query 'HKCU\Software\Microsoft\Installer\Products' /s 2>/dev/null | tr -d '\r' | grep -q 'ProductName *REG_SZ *GPU Canary$' ||
    msi_fail "the product is not registered for this user (HKCU\\Software\\Microsoft\\Installer\\Products)"
  entries=$(msi_entries)
  [ "$(grep -c . <<<"$entries")" = 1 ] && grep -q " $v1$" <<<"$entries" || msi_fail "uninstall entries after /i: '$entries', want one of $v1"
  step "msi: /i installs per user, shortcut, one entry, LAUNCH=1 starts"

  # The tray gives that shortcut the toasts' AppUserModelID at its first
  # start (app/shortcut, as app/tray calls it); read back from the .lnk.
  if ! wingo test -c "${overlay[@]}" -o "$work/bin/shortcut.test.exe" ./app/shortcut >"$out" 2>&1; then
    msi_fail "building app/shortcut's tests for Windows failed" "$out"
  elif ! (cd app/shortcut && GPUCANARY_MSI_INSTALLED=1 "$wine" "$work/bin/shortcut.test.exe" -test.run '^TestStampInstalledShortcut$' -test.v >"$out" 2>&1) ||
    ! grep -q -- '--- PASS: TestStampInstalledShortcut' "$out"; then
    msi_fail "stamping the installed shortcut's AppUserModelID" "$out"
  elif ! $mingw -O2 -Wall -municode -o "$work/bin/lnktarget.exe" scripts/wine/lnktarget.c -lole32 -luuid >"$out" 2>&1 ||
    ! "$wine" "$work/bin/lnktarget.exe" "$(winpath "$lnk")" >"$out" 2>&1 ||
    ! tr -d '\r' <"$out" | grep -qx 'C:\\users\\'"${user##*/}"'\\AppData\\Local\\Programs\\GPU Canary\\gpucanaryw.exe'; then
    msi_fail "the shell no longer reads the stamped shortcut's target" "$out"
  else
    step "msi: the shortcut carries io.github.gpucanary once stamped (read back)"
  fi

  # Settings the app would have written; the installer must never touch them.
  mkdir -p "$(dirname "$config")"
  printf '# the user'"'"'s settings\n' >"$config"
  msi_hold || return 0 # said why; the steps after need it
  if ! "$wine" msiexec /i "$(winpath "$work/msi2/$(basename "$msi1")")" /qn AUTOSTART=1 /l*v "$(winpath "$work/msi-i2.log")" >"$out" 2>&1; then
    msi_release
    msi_fail "msiexec /i of version $v2 failed" "$out"; return
  fi
  msi_released "the upgrade"
  msi_ran "$work/msi-i2.log" LaunchTray && msi_fail "a quiet upgrade without LAUNCH=1 started the tray" "$work/msi-i2.log"
  entries=$(msi_entries)
  [ "$(grep -c . <<<"$entries")" = 1 ] && grep -q " $v2$" <<<"$entries" || msi_fail "uninstall entries after the upgrade: '$entries', want one of $v2"
  [ -f "$dir/gpucanaryw.exe" ] && [ -f "$lnk" ] || msi_fail "the upgrade left no tray exe or shortcut"
  run=$("$wine" reg query 'HKCU\Software\Microsoft\Windows\CurrentVersion\Run' /v 'GPU Canary' 2>/dev/null | tr -d '\r' | sed -n 's/.*REG_SZ *//p')
  [ "$run" = '"C:\users\'"${user##*/}"'\AppData\Local\Programs\GPU Canary\gpucanaryw.exe"' ] || msi_fail "AUTOSTART=1 wrote the Run key as '$run'"
  step "msi: $v2 upgrades in place (one entry), the tray stopped first, AUTOSTART=1"

  msi_uninstall "$(winpath "$work/msi2/$(basename "$msi1")")" "of the per-user install" || return 0
  "$wine" reg query 'HKCU\Software\Microsoft\Windows\CurrentVersion\Run' /v 'GPU Canary' >/dev/null 2>&1 && msi_fail "msiexec /x left the Run-key value"
  grep -qx "# the user's settings" "$config" || msi_fail "msiexec /x did not keep $config"
  rm -rf "$(dirname "$config")"
  step "msi: msiexec /x stops the tray, removes every file, keeps config.toml"

  msi_per_machine "$msi1" "$v1" "$user" "$dir" "$lnk"
}

# msi_per_machine MSI VERSION PROFILE USERDIR USERLNK: the same MSI with
# ALLUSERS=1 (an administrator's prompt; wine's user is one) installs for
# every account: the programs in C:\Program Files\GPU Canary, the shortcut
# in the all-users Start menu, the product and its key paths under HKLM,
# and with AUTOSTART=1 the Run value in HKLM's Run key; nothing in the
# user's profile or HKCU. The tray of an account that may not write the
# all-users shortcut leaves it alone without an error, an administrator's
# stamps it (app/shortcut's TestStampPerMachineShortcut). Uninstalling it
# as Settings > Apps does (the entry's UninstallString, msiexec /x
# {ProductCode}, no ALLUSERS given) stops the tray and removes it all.
msi_per_machine() {
  local msi=$1 v=$2 user=$3 userdir=$4 userlnk=$5
  local out=$work/msi.out
  local dir="$WINEPREFIX/drive_c/Program Files/GPU Canary"
  local menu="$WINEPREFIX/drive_c/ProgramData/Microsoft/Windows/Start Menu/Programs"
  local lnk="$menu/GPU Canary.lnk"
  local f entries run code
  if ! "$wine" msiexec /i "$(winpath "$msi")" /qn ALLUSERS=1 AUTOSTART=1 /l*v "$(winpath "$work/msi-m1.log")" >"$out" 2>&1; then
    msi_fail "msiexec /i ALLUSERS=1 failed" "$out"; return
  fi
  for f in gpucanaryw.exe gpucanary.exe LICENSE.txt THIRD_PARTY_LICENSES.txt README.md; do
    [ -f "$dir/$f" ] || msi_fail "msiexec /i ALLUSERS=1 installed no $dir/$f"
  done
  [ ! -e "$userdir" ] || msi_fail "msiexec /i ALLUSERS=1 installed into the user's profile ($userdir)"
  [ -f "$lnk" ] || msi_fail "msiexec /i ALLUSERS=1 made no all-users shortcut $lnk"
  [ ! -e "$userlnk" ] || msi_fail "msiexec /i ALLUSERS=1 made a shortcut in the user's Start menu"
  "$wine" reg query 'HKLM\Software\Classes\Installer\Products' /s 2>/dev/null | tr -d '\r' | grep -q 'ProductName *REG_SZ *GPU Canary$' ||
    msi_fail "the product is not registered for the machine (HKLM\\Software\\Classes\\Installer\\Products)"
  "$wine" reg query 'HKCU\Software\Microsoft\Installer\Products' /s 2>/dev/null | tr -d '\r' | grep -q 'ProductName *REG_SZ *GPU Canary$' &&
    msi_fail "a per-machine install registered the product for the user"
  entries=$(msi_entries)
  [ "$(grep -c . <<<"$entries")" = 1 ] && grep -q '^HKEY_LOCAL_MACHINE\\.* '"$v"'$' <<<"$entries" ||
    msi_fail "uninstall entries after /i ALLUSERS=1: '$entries', want one of $v in HKLM"
  # The components' key paths (Root -1, HKMU) went to HKLM, not HKCU.
  "$wine" reg query 'HKLM\Software\GPU Canary\Installer' /v Programs 2>/dev/null | tr -d '\r' | grep -q 'REG_SZ *C:\\Program Files\\GPU Canary\\$' ||
    msi_fail "no key path under HKLM\\Software\\GPU Canary\\Installer naming C:\\Program Files\\GPU Canary"
  "$wine" reg query 'HKCU\Software\GPU Canary' >/dev/null 2>&1 && msi_fail "a per-machine install wrote HKCU\\Software\\GPU Canary"
  run=$("$wine" reg query 'HKLM\Software\Microsoft\Windows\CurrentVersion\Run' /v 'GPU Canary' 2>/dev/null | tr -d '\r' | sed -n 's/.*REG_SZ *//p')
  [ "$run" = '"C:\Program Files\GPU Canary\gpucanaryw.exe"' ] || msi_fail "AUTOSTART=1 ALLUSERS=1 wrote HKLM's Run key as '$run'"
  "$wine" reg query 'HKCU\Software\Microsoft\Windows\CurrentVersion\Run' /v 'GPU Canary' >/dev/null 2>&1 &&
    msi_fail "AUTOSTART=1 ALLUSERS=1 wrote the user's Run key"
  step "msi: ALLUSERS=1 installs per machine (Program Files, all-users menu, HKLM)"

  # The tray's stamp of the all-users shortcut: first as an account that
  # may not write it (the folder immutable: wine answers access denied),
  # then as an administrator; the shell still reads the stamped file.
  if [ ! -x "$work/bin/shortcut.test.exe" ]; then
    msi_fail "no app/shortcut test binary (see its build above)"
  else
    if chattr +i "$menu" 2>"$out"; then
      msi_immutable=$menu
      (cd app/shortcut && GPUCANARY_MSI_PER_MACHINE=denied "$wine" "$work/bin/shortcut.test.exe" -test.run '^TestStampPerMachineShortcut$' -test.v >"$out" 2>&1)
      chattr -i "$menu"
      msi_immutable=
      grep -q -- '--- PASS: TestStampPerMachineShortcut' "$out" || msi_fail "the tray of an account that may not write the all-users shortcut" "$out"
    else
      echo "test-windows: note: chattr +i is not permitted here ($(cat "$out")); the all-users shortcut's refused write is not tested"
    fi
    if ! (cd app/shortcut && GPUCANARY_MSI_PER_MACHINE=1 "$wine" "$work/bin/shortcut.test.exe" -test.run '^TestStampPerMachineShortcut$' -test.v >"$out" 2>&1) ||
      ! grep -q -- '--- PASS: TestStampPerMachineShortcut' "$out"; then
      msi_fail "stamping the all-users shortcut's AppUserModelID" "$out"
    elif ! "$wine" "$work/bin/lnktarget.exe" "$(winpath "$lnk")" >"$out" 2>&1 ||
      ! tr -d '\r' <"$out" | grep -qx 'C:\\Program Files\\GPU Canary\\gpucanaryw.exe'; then
      msi_fail "the shell no longer reads the stamped all-users shortcut's target" "$out"
    else
      step "msi: the all-users shortcut: left alone unwritable, stamped by an admin"
    fi
  fi

  code=$("$wine" reg query "${entries%% *}" /v UninstallString 2>/dev/null | tr -d '\r' | sed -n 's/.*REG_EXPAND_SZ *MsiExec.exe \/X\({[0-9A-F-]*}\)$/\1/p')
  [ -n "$code" ] || { msi_fail "no msiexec /X{ProductCode} in the uninstall entry ${entries%% *}"; return; }
  msi_uninstall "$code" "$code of the per-machine install" || return 0
  "$wine" reg query 'HKLM\Software\Microsoft\Windows\CurrentVersion\Run' /v 'GPU Canary' >/dev/null 2>&1 && msi_fail "msiexec /x left HKLM's Run value"
  "$wine" reg query 'HKLM\Software\GPU Canary' >/dev/null 2>&1 && msi_fail "msiexec /x left HKLM\\Software\\GPU Canary"
  "$wine" reg query 'HKLM\Software\Classes\Installer\Products' /s 2>/dev/null | tr -d '\r' | grep -q 'ProductName *REG_SZ *GPU Canary$' &&
    msi_fail "msiexec /x left the product registered for the machine"
  step "msi: msiexec /X{ProductCode} removes the per-machine install"
}
