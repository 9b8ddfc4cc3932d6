# The processes end to end under wine, sourced by scripts/test-windows.sh
# (which defines work, wine, winpath, mkvenv, e2e_fail, step and failed).
#
# Two stand-in workloads (monitor/procs/testdata/winstub/workload.c, as
# each venv's Scripts\python.exe) load the stand-in runtime DLL copied
# under torch's names from their venv's Lib\site-packages\torch\lib: a
# CPU one that keeps a core busy, a CUDA one that sleeps. Under a
# simulated A100 (no process on it):
#   - `gpucanary.exe ps --json` must list both with their environment
#     (found from the interpreter's path) and modules: verdict cpu for the
#     CPU one, cuda-idle for the CUDA one;
#   - `gpucanary.exe watch --json`, with a settings file whose busy window
#     is 1 s, must raise JOB_ON_CPU for the CPU one (the same PID), and
#     when the stand-in pip (pip.c) overwrites the CUDA venv with a CPU
#     torch while it runs, CUDA_WHEEL_REPLACED naming that pip (its PID
#     and command line) as the culprit.
# Every wait is on a condition, capped so that a failure cannot hang.

pe=$work/procs-e2e
mkdir -p "$pe"
cpuvenv=$pe/train/.venv
cudavenv=$pe/serve/.venv
mkvenv "$cpuvenv" 2.5.1+cpu torch_cpu.dll
mkvenv "$cudavenv" 2.5.1+cu121 torch_cpu.dll torch_cuda.dll c10_cuda.dll
cat >"$pe/a100.json" <<'EOF'
{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}
EOF
# The busy rule made short, so that the test waits 1 s, not 20; a low
# threshold, so that a spinner starved by a loaded machine still counts.
cat >"$pe/config.toml" <<'EOF'
refresh = "250ms"
cpu_fallback_percent = 10.0
cpu_fallback_window = "1s"
discover_home = false
EOF
sim=$(winpath "$pe/a100.json")
config=$(winpath "$pe/config.toml")

# waitfor FILE REGEX SECONDS: until a line of FILE matches, or the time is up.
waitfor() {
  local deadline=$((SECONDS + $3))
  until grep -Eq "$2" "$1" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.2
  done
}
# torchlib VENV LIB: the Windows path of LIB in VENV's torch\lib.
torchlib() { winpath "$1/Lib/site-packages/torch/lib/$2"; }
# procs_fail shows what each program printed, then fails the e2e.
procs_fail() {
  for f in "$pe"/*.out "$pe"/*.err "$pe"/ps.json; do
    if [ -s "$f" ]; then echo "--- ${f##*/}:"; cat "$f"; fi
  done >"$work/out"
  e2e_fail "$1"
}

export WORKLOAD_STOP=$(winpath "$pe/stop") PIP_STOP=$(winpath "$pe/pip.stop")
: >"$pe/train.out"
: >"$pe/serve.out"
"$wine" "$cpuvenv/Scripts/python.exe" train.py "$(torchlib "$cpuvenv" torch_cpu.dll)" >"$pe/train.out" 2>&1 &
"$wine" "$cudavenv/Scripts/python.exe" --sleep serve.py "$(torchlib "$cudavenv" torch_cpu.dll)" \
  "$(torchlib "$cudavenv" torch_cuda.dll)" "$(torchlib "$cudavenv" c10_cuda.dll)" >"$pe/serve.out" 2>&1 &
if ! waitfor "$pe/train.out" '^ready' 60 || ! waitfor "$pe/serve.out" '^ready' 60; then
  procs_fail "the stand-in workloads did not start"
else
  # ps: both listed with their environment, modules and verdict.
  code=0
  NO_COLOR=1 "$wine" "$work/bin/gpucanary.exe" ps --json --gpu-sim "$sim" >"$pe/ps.json" 2>"$pe/ps.err" || code=$?
  if [ "$code" != 0 ]; then
    procs_fail "ps --json exited $code"
  elif ! cpupid=$(python3 - "$pe/ps.json" "$(winpath "$cpuvenv")" "$(winpath "$cudavenv")" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["processes"]
want = {sys.argv[2]: ("cpu", ["torch_cpu.dll"]),
        sys.argv[3]: ("cuda-idle", ["c10_cuda.dll", "torch_cpu.dll", "torch_cuda.dll"])}
pids = {}
for env, (verdict, libs) in want.items():
    found = [r for r in rows if r.get("env") == env]
    if len(found) != 1:
        sys.exit(f"ps lists {len(found)} processes in {env}, want 1")
    r = found[0]
    site = env + "\\Lib\\site-packages\\torch\\lib\\"
    checks = {
        "name": r["name"] == "python.exe",
        "env_via": r.get("env_via") == "interpreter",
        "verdict": r["verdict"] == verdict,
        "gpu_libs": r["gpu_libs"] == libs,
        "lib_paths": r.get("lib_paths") == [site + l for l in libs],
        "user": r["user"] != "",
        "start_time": not r["start_time"].startswith("0001-"),
        "rss_bytes": r["rss_bytes"] > 0,
        "cmdline": r["cmdline"][:1] == [env + "\\Scripts\\python.exe"],
        "unreadable": not r.get("unreadable"),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        sys.exit(f"ps: the process in {env} is wrong in {bad}: {json.dumps(r)}")
    pids[verdict] = r["pid"]
print(pids["cpu"])
PY
  ); then
    procs_fail "ps --json does not list the workloads as they are (above)"
  else
    step "e2e: ps lists both workloads: cpu (PID $cpupid), cuda-idle"

    # watch: JOB_ON_CPU for the CPU workload, then the culprit of an overwrite.
    : >"$pe/watch.out"
    NO_COLOR=1 "$wine" "$work/bin/gpucanary.exe" --config "$config" watch --json --gpu-sim "$sim" \
      "$(winpath "$cpuvenv")" "$(winpath "$cudavenv")" >"$pe/watch.out" 2>"$pe/watch.err" &
    watcher=$!
    if ! waitfor "$pe/watch.out" "\"kind\":\"JOB_ON_CPU\".*\"pid\":$cpupid[,}]" 60; then
      procs_fail "watch raised no JOB_ON_CPU for PID $cpupid"
    else
      step "e2e: watch raises JOB_ON_CPU for PID $cpupid"
      waitfor "$pe/watch.out" '"kind":"ENV_ADDED".*serve' 30 || true
      : >"$pe/pip.out"
      "$wine" "$work/procstub/pip.exe" install "--prefix=$(winpath "$cudavenv")" torch==2.5.1+cpu >"$pe/pip.out" 2>&1 &
      if ! waitfor "$pe/watch.out" '"kind":"CUDA_WHEEL_REPLACED"' 60; then
        procs_fail "watch saw no CUDA_WHEEL_REPLACED after the stand-in pip ran"
      elif ! python3 - "$pe/watch.out" "$(winpath "$cudavenv")" <<'PY'; then
import json, sys
env = sys.argv[2]
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["kind"] != "CUDA_WHEEL_REPLACED":
        continue
    c = e.get("culprit") or {}
    want = "pip install --prefix=" + env + " torch==2.5.1+cpu"
    if e.get("env") != env or c.get("command") != want or not c.get("pid") or c.get("installer") != "pip":
        sys.exit(f"CUDA_WHEEL_REPLACED does not name the stand-in pip: {line.strip()}")
    # The message shortens a long command line; it keeps its start and the PID.
    if "by `pip install --prefix=" not in e["message"] or "` (PID " + str(c["pid"]) + ")" not in e["message"]:
        sys.exit(f"the message does not name the culprit: {e['message']}")
    sys.exit(0)
PY
        procs_fail "CUDA_WHEEL_REPLACED does not name the pip that overwrote the venv"
      else
        step "e2e: watch names the stand-in pip as the culprit"
      fi
    fi
    : >"$pe/pip.stop"
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
  fi
fi
: >"$pe/stop"
: >"$pe/pip.stop"
wait 2>/dev/null || true
