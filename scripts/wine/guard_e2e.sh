# End to end under wine, the guard's Windows form (sourced by
# scripts/test-windows.sh, after mkvenv and e2e_fail): `gpucanary guard`
# on a CUDA venv in the Windows layout writes pip.ini (CRLF) naming the
# constraints file by its Windows path, `check` says guarded, and
# `unguard` gives the venv back file for file.
guard_e2e() {
  local gvenv=$work/guarded/.venv wv cons before after
  mkvenv "$gvenv" 2.5.1+cu121 torch_cuda.dll
  wv=$(winpath "$gvenv")
  cons="$wv\\gpucanary-constraints.txt"
  before=$(cd "$gvenv" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
  code=0
  NO_COLOR=1 "$wine" "$work/bin/gpucanary.exe" guard "$wv" >"$work/out" 2>&1 || code=$?
  if [ "$code" != 0 ]; then
    e2e_fail "guard exited $code, want 0"; return
  fi
  if [ ! -f "$gvenv/pip.ini" ] || ! grep -qF "constraint = $cons"$'\r' "$gvenv/pip.ini" ||
     ! grep -qF "gpucanary unguard $wv"$'\r' "$gvenv/pip.ini"; then
    e2e_fail "guard wrote no pip.ini (CRLF) naming $cons and gpucanary unguard"; cat "$gvenv/pip.ini" 2>/dev/null; return
  fi
  if ! grep -qF "torch==2.5.1+cu121"$'\r' "$gvenv/gpucanary-constraints.txt"; then
    e2e_fail "the constraints file does not pin torch==2.5.1+cu121"; return
  fi
  step "e2e: guard writes pip.ini naming $(basename "$cons")"
  code=0
  NO_COLOR=1 "$wine" "$work/bin/gpucanary.exe" check "$wv" >"$work/out" 2>&1 || code=$?
  if ! grep -q 'guarded' "$work/out"; then
    e2e_fail "check does not say guarded"; return
  fi
  code=0
  NO_COLOR=1 "$wine" "$work/bin/gpucanary.exe" unguard "$wv" >"$work/out" 2>&1 || code=$?
  after=$(cd "$gvenv" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
  if [ "$code" != 0 ] || [ "$before" != "$after" ]; then
    e2e_fail "unguard exited $code or did not give the venv back file for file"; diff <(echo "$before") <(echo "$after"); return
  fi
  step "e2e: check says guarded; unguard restores the venv"
}
