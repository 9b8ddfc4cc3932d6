# The training companion end to end under wine, sourced by
# scripts/test-windows.sh after procs_e2e.sh (it uses work, wine, winpath,
# mkvenv, e2e_fail, step, failed, system32 and waitfor).
#
# Two stand-in jobs (workload.c, as a CUDA venv's Scripts\python.exe) run
# on the stand-in nvml.dll's RTX 4090 with its memory full (scenario
# rtx4090-full, NVMLSTUB_PID listing both), with the stand-in pdh.dll
# (scripts/wine/pdh.c) giving one of them Shared Usage that grows, and the
# stand-in wevtapi.dll (scripts/wine/wevtapi.c) giving the System log.
# `gpucanary.exe watch --json`, with short windows, must raise:
#   - VRAM_SPILL for the spilling job's PID, from the PDH counters;
#   - DRIVER_RESET once, for a Display event 4101 of nvlddmkm logged while
#     it runs, and not for the one logged before it started;
#   - JOB_ENDED crashed with the exit code named (0xC0000409) for the job
#     that exits so, and JOB_ENDED finished for the one that exits 0, both
#     read through the held handle.

if ! declare -F waitfor >/dev/null; then
  waitfor() { # FILE REGEX SECONDS, as procs_e2e.sh's
    local deadline=$((SECONDS + $3))
    until grep -Eq "$2" "$1" 2>/dev/null; do
      [ $SECONDS -ge $deadline ] && return 1
      sleep 0.2
    done
  }
fi
te=$work/training-e2e
mkdir -p "$te"
mingw=${mingw:-x86_64-w64-mingw32-gcc}
$mingw -std=c11 -O2 -Wall -Wextra -shared -o "$te/pdh.dll" scripts/wine/pdh.c
$mingw -std=c11 -O2 -Wall -Wextra -shared -o "$te/wevtapi.dll" scripts/wine/wevtapi.c
# wine's own pdh.dll and wevtapi.dll are put back at the end; the
# stand-ins load only where WINEDLLOVERRIDES says native.
cp "$system32/pdh.dll" "$te/wine-pdh.dll"
cp "$system32/wevtapi.dll" "$te/wine-wevtapi.dll"
cp "$te/pdh.dll" "$te/wevtapi.dll" "$system32/"
cp "$work/stub/nvml.dll" "$system32/nvml.dll"
tvenv=$te/lora/.venv
mkvenv "$tvenv" 2.5.1+cu121 torch_cpu.dll torch_cuda.dll

cat >"$te/config.toml" <<'TOML'
refresh = "250ms"
job_min_runtime = "1s"
spill_window = "1s"
discover_home = false
TOML
# An event 4101 from an hour ago: before the watch started, so no news.
logevent() { # RECORD TIME
  printf "<Event xmlns='http://schemas.microsoft.com/win/2004/08/events/event'><System><Provider Name='Display'/><EventID Qualifiers='0'>4101</EventID><Level>3</Level><TimeCreated SystemTime='%s'/><EventRecordID>%s</EventRecordID><Channel>System</Channel><Computer>WINE</Computer></System><EventData><Data>nvlddmkm</Data><Data></Data></EventData></Event>\n" "$2" "$1" >>"$te/system.evtx.txt"
}
: >"$te/system.evtx.txt"
logevent 7001 "$(date -u -d '1 hour ago' +%Y-%m-%dT%H:%M:%S.0000000Z)"

training_fail() {
  for f in "$te"/*.out "$te"/*.err "$te"/wevt.log; do
    if [ -s "$f" ]; then echo "--- ${f##*/}:"; cat "$f"; fi
  done >"$work/out"
  e2e_fail "$1"
}

: >"$te/crash.out"
: >"$te/done.out"
WORKLOAD_STOP=$(winpath "$te/stop") WORKLOAD_EXIT=0xC0000409 \
  "$wine" "$tvenv/Scripts/python.exe" --sleep train_lora.py >"$te/crash.out" 2>&1 &
WORKLOAD_STOP=$(winpath "$te/stop") WORKLOAD_EXIT=0 \
  "$wine" "$tvenv/Scripts/python.exe" --sleep eval.py >"$te/done.out" 2>&1 &
if ! waitfor "$te/crash.out" '^ready pid=' 60 || ! waitfor "$te/done.out" '^ready pid=' 60; then
  training_fail "the stand-in jobs did not start"
else
  crashpid=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$te/crash.out")
  donepid=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$te/done.out")
  # Dedicated 23 GiB; shared from 572 MiB, 64 MiB more at each poll.
  echo "pid_${crashpid}_luid_0x00000000_0x0000D1B8_phys_0 24696061952 600000000 67108864" >"$te/pdh.txt"
  : >"$te/watch.out"
  NVMLSTUB_SCENARIO=rtx4090-full NVMLSTUB_PID="$crashpid,$donepid" \
    PDHSTUB_FILE=$(winpath "$te/pdh.txt") WEVTSTUB_FILE=$(winpath "$te/system.evtx.txt") WEVTSTUB_LOG=$(winpath "$te/wevt.log") \
    WINEDLLOVERRIDES="$WINEDLLOVERRIDES;pdh,wevtapi=n" NO_COLOR=1 \
    "$wine" "$work/bin/gpucanary.exe" --config "$(winpath "$te/config.toml")" watch --json "$(winpath "$tvenv")" \
    >"$te/watch.out" 2>"$te/watch.err" &
  twatcher=$!
  if ! waitfor "$te/watch.out" "\"kind\":\"FINDING_RAISED\".*\"code\":\"VRAM_SPILL\".*\"pid\":$crashpid[,}]" 60; then
    training_fail "watch raised no VRAM_SPILL for PID $crashpid from the stand-in PDH counters"
  else
    step "e2e: VRAM_SPILL for PID $crashpid from the PDH counters"
    logevent 7002 "$(date -u +%Y-%m-%dT%H:%M:%S.0000000Z)"
    : >"$te/stop"
    # The reader asks the log at one poll in five.
    if ! waitfor "$te/watch.out" '"kind":"FINDING_RAISED".*"code":"DRIVER_RESET"' 40; then
      training_fail "watch raised no DRIVER_RESET for the Display event 4101 logged while it ran"
    elif ! waitfor "$te/watch.out" "\"kind\":\"JOB_ENDED\".*\"pid\":$crashpid[,}]" 40 ||
      ! waitfor "$te/watch.out" "\"kind\":\"JOB_ENDED\".*\"pid\":$donepid[,}]" 40; then
      training_fail "watch told no JOB_ENDED for PIDs $crashpid and $donepid"
    elif ! python3 - "$te/watch.out" "$crashpid" "$donepid" "$te/wevt.log" <<'PY'; then
import json, sys
crash, done = int(sys.argv[2]), int(sys.argv[3])
events = [json.loads(l) for l in open(sys.argv[1])]
resets = [e for e in events if e["kind"] == "FINDING_RAISED" and e["finding"]["code"] == "DRIVER_RESET"]
if len(resets) != 1 or "nvlddmkm" not in resets[0]["message"] or resets[0]["finding"].get("env"):
    sys.exit(f"DRIVER_RESET raised {len(resets)} times, want once, about the machine, naming nvlddmkm: {resets}")
spill = next(e for e in events if e["kind"] == "FINDING_RAISED" and e["finding"]["code"] == "VRAM_SPILL")
if spill["finding"].get("env") != "gpu:0" or "Sysmem Fallback Policy" not in spill["message"]:
    sys.exit(f"VRAM_SPILL: {spill}")
ended = {e["job"]["pid"]: e for e in events if e["kind"] == "JOB_ENDED"}
c, d = ended[crash]["job"], ended[done]["job"]
# The exit code is an NTSTATUS: 0xC0000409 as a signed 32-bit number.
if c["how"] != "crashed" or (c.get("exit_code", 0) & 0xFFFFFFFF) != 0xC0000409 or "0xC0000409" not in ended[crash]["message"]:
    sys.exit(f"the job that exited 0xC0000409: {ended[crash]}")
if d["how"] != "finished" or d.get("exit_code") != 0:
    sys.exit(f"the job that exited 0: {ended[done]}")
query = open(sys.argv[4]).read()
if "System *[System[Provider[@Name='Display'] and (EventID=4101)" not in query:
    sys.exit(f"the System log was not asked for Display event 4101: {query}")
PY
      training_fail "the training events under wine are not as they should be (above)"
    else
      step "e2e: DRIVER_RESET from the event log, JOB_ENDED crashed (0xC0000409) and finished"
    fi
  fi
  kill "$twatcher" 2>/dev/null || true
  wait "$twatcher" 2>/dev/null || true
fi
: >"$te/stop"
wait "$!" 2>/dev/null || true
cp "$te/wine-pdh.dll" "$system32/pdh.dll"
cp "$te/wine-wevtapi.dll" "$system32/wevtapi.dll"
rm -f "$system32/nvml.dll"
