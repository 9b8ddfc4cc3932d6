# Sourced by scripts/test-windows.sh: Windows as its users live it (issue
# 18), under wine. Uses the script's variables and helpers (wine, work,
# system32, overlay, wingo, testexe, winpath, step, failed, venv, site).
#
#   desktop_build   cross-builds what the checks run (after the other builds)
#   desktop_checks  runs them; a failure is added to failed
#
# What is proven here and what needs a real Windows machine:
# docs/testing.md, "Testing the Windows build".

# desktop_packages run whole under wine; desktop_only run only their
# Windows tests (the rest of their tests assume POSIX paths or Xvfb).
desktop_packages=(./monitor/shell ./monitor/nowindow ./monitor/instance ./monitor/report ./app/autostart)
declare -A desktop_only=([./app/tray]='^TestWindows' [./monitor/fix]='^TestWindows' [./cmd/gpucanary]='^(TestWindowsExeResources|TestEmbeddingStartsTheTray)$')

desktop_build() {
  local p
  for p in "${desktop_packages[@]}" "${!desktop_only[@]}"; do
    wingo test -c "${overlay[@]}" -tags nogui -o "$(testexe "$p")" "$p"
  done
  # The exes with their resources (icon, version, manifest), as make
  # windows makes them; here without cgo (the resources are the same).
  desktop_version=$(scripts/version.sh)
  mkdir -p "$work/exes"
  trap 'rm -f cmd/gpucanary/rsrc_windows_amd64.syso; cleanup' EXIT
  VERSION=$desktop_version scripts/winres.sh console
  wingo build -tags nogui -trimpath -ldflags "-X main.version=$desktop_version" -o "$work/exes/gpucanary.exe" ./cmd/gpucanary
  VERSION=$desktop_version scripts/winres.sh gui
  wingo build -tags nogui -trimpath -ldflags "-H=windowsgui -X main.version=$desktop_version" -o "$work/exes/gpucanaryw.exe" ./cmd/gpucanary
  rm -f cmd/gpucanary/rsrc_windows_amd64.syso
  trap cleanup EXIT
  step "desktop: test binaries and exes with resources cross-built"
}

desktop_fail() { echo "test-windows: desktop: $1" >&2; [ -f "${2:-/dev/null}" ] && cat "$2"; failed+=("desktop: $1"); }

# desktop_reg_value KEY NAME: a value as wine's reg.exe reads it back.
desktop_reg_value() {
  local which=(/ve)
  [ -n "${2:-}" ] && which=(/v "$2")
  { "$wine" reg query "$1" "${which[@]}" 2>/dev/null || true; } | tr -d '\r' | sed -n 's/^ *[^ ].*REG_SZ *//p' | head -n1
}

desktop_checks() {
  local p out=$work/desktop.out
  for p in "${desktop_packages[@]}"; do
    if (cd "$p" && AUTOSTART_KEEP=1 "$wine" "$(testexe "$p")" -test.count=1 -test.timeout=5m ${WINE_TESTFLAGS:-}); then
      step "desktop: tests pass under wine: $p"
    else
      desktop_fail "tests fail under wine: $p"
    fi
  done
  for p in "${!desktop_only[@]}"; do
    if (cd "$p" && GPUCANARY_EXES="$(winpath "$work/exes/gpucanary.exe")=console,$(winpath "$work/exes/gpucanaryw.exe")=gui" \
      GPUCANARY_VERSION=$desktop_version "$wine" "$(testexe "$p")" -test.count=1 -test.timeout=5m -test.run "${desktop_only[$p]}" ${WINE_TESTFLAGS:-}); then
      step "desktop: Windows tests pass under wine: $p"
    else
      desktop_fail "Windows tests fail under wine: $p"
    fi
  done
  # app/autostart left its Run value (AUTOSTART_KEEP) and app/tray its
  # toast registration in the prefix's registry: read back with reg.exe.
  local run aumid=$'HKCU\\Software\\Classes\\AppUserModelId\\io.github.gpucanary'
  run=$(desktop_reg_value 'HKCU\Software\Microsoft\Windows\CurrentVersion\Run' 'GPU Canary')
  if [[ $run != '"'*'app_autostart.test.exe"' ]]; then
    desktop_fail "the Run key names $run, not the test program that set it"
  elif [ "$(desktop_reg_value "$aumid" DisplayName)" != "GPU Canary" ] ||
    [ "$(desktop_reg_value "$aumid" CustomActivator)" != "{7C5E3B1A-2F4D-4E8B-9A61-3D0C8B5E7F42}" ] ||
    [[ $(desktop_reg_value "$aumid" IconUri) != *'\gpucanary\icon.png' ]] ||
    [[ $(desktop_reg_value 'HKCU\Software\Classes\CLSID\{7C5E3B1A-2F4D-4E8B-9A61-3D0C8B5E7F42}\LocalServer32') != '"'*'app_tray.test.exe"' ]]; then
    "$wine" reg query "$aumid" >"$out" 2>&1 || true
    desktop_fail "the toast registration does not read back from the registry" "$out"
  else
    step "desktop: reg.exe reads back the Run key and the AppUserModelID"
  fi

  # Fix and activate commands paste into PowerShell: a venv under a folder
  # named with a space, $, & and ' (its own pip, so the command runs its
  # python.exe), quoted with the call operator and a backtick before $.
  local hostile=$work/'my $proj R&D'"'"'s'/.venv
  mkdir -p "$(dirname "$hostile")"
  cp -r "$venv" "$hostile"
  mkdir -p "$hostile/Lib/site-packages/pip"
  cp "$work/stub/nvml.dll" "$system32/nvml.dll"
  local code=0 want
  NVMLSTUB_SCENARIO=rtx4090-wddm NO_COLOR=1 "$wine" "$work/exes/gpucanary.exe" check "$(winpath "$hostile")" >"$out" 2>&1 || code=$?
  want="fix: & \"$(winpath "$hostile" | sed 's/\$/`$/g')\\Scripts\\python.exe\" -m pip install torch=="
  if [ "$code" != 1 ] || ! grep -qF -- "$want" "$out"; then
    echo "want: $want"
    desktop_fail "check does not print the fix command quoted for PowerShell" "$out"
  else
    step "desktop: fix commands are quoted for PowerShell (& \"…\", \`\$)"
  fi

  # The evidence bundle says Windows, its version and build, and the
  # nvml.dll the driver was read from; never the Linux host's distribution.
  local report=$work/report
  NVMLSTUB_SCENARIO=rtx4090-wddm "$wine" "$work/exes/gpucanary.exe" report -o "$(winpath "$report")" "$(winpath "$venv")" >"$out" 2>&1 || true
  if ! grep -q '^- OS: windows amd64, .*Windows.*, version [0-9.]* build [0-9.]*$' "$report/env_info.md" 2>/dev/null ||
    ! grep -qi '^- NVIDIA driver: 566.36 (read from c:\\windows\\system32\\nvml.dll)$' "$report/env_info.md" ||
    grep -qiE 'debian|ubuntu|kernel' "$report/env_info.md" "$report/README.md"; then
    cat "$report/env_info.md" >>"$out" 2>/dev/null || true
    desktop_fail "report's env_info.md does not describe this Windows and its nvml.dll" "$out"
  else
    step "desktop: report says Windows, its build and the nvml.dll, not Linux"
  fi
  rm -f "$system32/nvml.dll"

  # The zip a user unpacks: both exes, README, docs/, LICENSE, the licences of the
  # Windows build; its console exe runs from where it was unpacked.
  if ! EXES=$work/exes VERSION=$desktop_version scripts/dist-windows.sh "$work/dist" >"$out" 2>&1; then
    desktop_fail "scripts/dist-windows.sh failed" "$out"
    return
  fi
  local name=gpucanary-$desktop_version-windows-amd64 f
  (cd "$work/dist" && unzip -q "$name.zip")
  for f in gpucanary.exe gpucanaryw.exe README.md docs/windows.md LICENSE third_party_licenses/licenses.tsv \
    third_party_licenses/git.sr.ht/~jackmordaunt/go-toast/v2/LICENSE third_party_licenses/go/LICENSE; do
    [ -f "$work/dist/$name/$f" ] || desktop_fail "the zip lacks $name/$f"
  done
  if ! "$wine" "$work/dist/$name/gpucanary.exe" version >"$out" 2>&1 || ! grep -qF "$desktop_version" "$out"; then
    desktop_fail "gpucanary.exe from the unpacked zip does not say its version" "$out"
  else
    step "desktop: the Windows zip holds both exes, README, LICENSE, licences; it runs unpacked"
  fi
  desktop_signing
  desktop_gui_tray
}

# desktop_signing: the signing hook of dist-windows.sh, with a throwaway
# self-signed certificate made for this run (never shipped; a release
# brings its own, docs/windows.md, "Signing"): both exes come out of the
# zip with an Authenticode signature that osslsigncode verifies against it.
desktop_signing() {
  local out=$work/desktop.out sign=$work/sign
  if ! command -v osslsigncode >/dev/null || ! command -v openssl >/dev/null; then
    step "desktop: signing not checked (osslsigncode or openssl missing)"
    return
  fi
  mkdir -p "$sign"
  printf 'throwaway\n' >"$sign/pass"
  openssl req -x509 -newkey rsa:2048 -nodes -subj "/CN=GPU Canary test signing" -days 1 \
    -addext extendedKeyUsage=codeSigning -keyout "$sign/key.pem" -out "$sign/cert.pem" >/dev/null 2>&1
  openssl pkcs12 -export -inkey "$sign/key.pem" -in "$sign/cert.pem" -out "$sign/cert.pfx" -passout file:"$sign/pass" >/dev/null 2>&1
  if ! SIGN_PKCS12=$sign/cert.pfx SIGN_PASSWORD_FILE=$sign/pass EXES=$work/exes VERSION=$desktop_version \
    scripts/dist-windows.sh "$sign/dist" >"$out" 2>&1; then
    desktop_fail "scripts/dist-windows.sh with a certificate failed" "$out"
    return
  fi
  local name=gpucanary-$desktop_version-windows-amd64 exe
  (cd "$sign/dist" && unzip -q "$name.zip")
  for exe in gpucanary.exe gpucanaryw.exe; do
    if ! osslsigncode verify -CAfile "$sign/cert.pem" -in "$sign/dist/$name/$exe" >"$out" 2>&1; then
      desktop_fail "$exe in the signed zip does not verify" "$out"
      return
    fi
  done
  step "desktop: dist-windows signs both exes (osslsigncode verifies them)"
}

# desktop_gui_tray (WINE_GUI=1, after make windows): the real tray,
# bin/gpucanaryw.exe (cgo, Fyne), on an Xvfb display under wine: a second
# start finds the first one's mutex, ends with exit 0, and the first one
# opens its Environments window. Not part of make test: make windows takes
# minutes from a cold cache.
desktop_gui_tray() {
  [ "${WINE_GUI:-}" = 1 ] || return 0
  local out=$work/desktop.out sim=$work/a100.json display=:$((70 + RANDOM % 9)) xvfb first
  if [ ! -f bin/gpucanaryw.exe ] || ! command -v Xvfb >/dev/null; then
    desktop_fail "WINE_GUI=1 needs bin/gpucanaryw.exe (make windows) and Xvfb"
    return
  fi
  printf '{"driver": "550.54.15", "cuda_driver": "12.4", "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960, "processes": []}]}\n' >"$sim"
  Xvfb "$display" -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  DISPLAY=$display "$wine" bin/gpucanaryw.exe --gpu-sim "$(winpath "$sim")" >"$work/tray1.log" 2>&1 &
  first=$!
  local i
  for i in $(seq 60); do
    grep -q 'engine\|component=' "$work/tray1.log" 2>/dev/null && break
    sleep 1
  done
  if ! DISPLAY=$display timeout 60 "$wine" bin/gpucanaryw.exe --gpu-sim "$(winpath "$sim")" >"$out" 2>&1 ||
    ! grep -q 'already running; its Environments window was brought up' "$out"; then
    desktop_fail "a second start of gpucanaryw.exe did not hand over to the first" "$out"
  else
    for i in $(seq 30); do
      DISPLAY=$display xwininfo -root -tree 2>/dev/null | grep -q '"GPU Canary — Environments"' && break
      sleep 1
    done
    if DISPLAY=$display xwininfo -root -tree 2>/dev/null | grep -q '"GPU Canary — Environments"'; then
      step "desktop: a second gpucanaryw.exe raises the first one's window"
    else
      desktop_fail "the first gpucanaryw.exe opened no Environments window" "$work/tray1.log"
    fi
  fi
  kill "$first" 2>/dev/null || true
  "$wineserver" -k 2>/dev/null || true
  kill "$xvfb" 2>/dev/null || true
}
