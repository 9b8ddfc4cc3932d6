#!/usr/bin/env bash
# make test-gpu: checks GPU Canary against a real NVIDIA GPU and a real CUDA
# torch. It builds nothing: it runs the carried bin/gpucanary-cli and, when
# present, bin/gpu.test and bin/procs.test (make gpu-kit on the build
# machine). Needs python3 with a CUDA torch on PATH.
#
#   0. The NVML backend's and the process scanner's own tests, on the real
#      driver and kernel, and the cost of one NVML snapshot.
#   1. `check --json` on python3's environment must read a CUDA build.
#   2. A real GPU job (matmuls on cuda) must get verdict "gpu" in `ps --json`.
#   3. The same torch with CUDA_VISIBLE_DEVICES= (a CPU job) must get
#      "cuda-idle", for the reason that CUDA_VISIBLE_DEVICES hides the GPU,
#      and, busy past the 20 s window, a JOB_ON_CPU finding.
#   1b. The arch list GPU Canary reads from torch's libtorch_cuda.so (its
#      fat binary, check --json's cuda_libs) must hold every arch
#      torch.cuda.get_arch_list() names (the reader may see more: kernels
#      built for sm_90a and the like are not in torch's list).
#   4. `watch --json`, the engine the tray runs, running alongside must
#      raise a JOB_ON_CPU event for the CPU job and none for the GPU job.
#   5. Training runs (scripts/gpu-jobs.py): torch loops on the GPU that
#      finish, are killed, and die of torch.OutOfMemoryError with the
#      Traceback in their log must each be told once by `watch --json` as
#      JOB_ENDED finished / crashed / crashed out of GPU memory, and one that
#      idles holding its memory as JOB_STALLED ("sleeping"); the GPU's
#      clocks-event reasons, PCIe link and memory errors as read are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${GPUCANARY_CLI:-bin/gpucanary-cli}
py=${PYTHON:-python3}
[ -x "$cli" ] || { echo "test-gpu: $cli is missing; run 'make cli' on the build machine and carry bin/"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

root=$PWD
for kit in gpu:monitor/gpu procs:monitor/procs; do
  t=bin/${kit%%:*}.test
  [ -x "$t" ] || { echo "test-gpu: $t is missing (make gpu-kit); its tests are skipped"; continue; }
  echo "== $t (in ${kit#*:})"
  set +e
  (cd "${kit#*:}" && "$root/$t" -test.count=1 -test.v > /tmp/gc-kit.log 2>&1)
  rc=$?
  set -e
  grep -E '^(--- (FAIL|SKIP)|FAIL|PASS$|ok)|open_test.go' /tmp/gc-kit.log | cut -c1-600 || true
  echo "$(grep -c '^--- PASS' /tmp/gc-kit.log) passed, exit status $rc"
  [ $rc -eq 0 ] || { tail -50 /tmp/gc-kit.log; exit 1; }
done
if [ -x bin/gpu.test ]; then
  echo "== one NVML snapshot"
  bin/gpu.test -test.run '^$' -test.bench BenchmarkSnapshotNVML -test.benchmem -test.benchtime 200x | grep -E '^Benchmark|ok|FAIL'
fi

prefix=$("$py" -c 'import sys; print(sys.prefix)')
echo "== environment: $prefix"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'

echo "== gpucanary check --json $prefix"
set +e
"$cli" check --json "$prefix" > /tmp/gc-check.json
check_rc=$?
set -e
echo "exit status $check_rc"
"$py" - /tmp/gc-check.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = r["gpu"]
print("gpu:", "simulated" if g["simulated"] else "real", "driver", g["driver"], "cuda", g["cuda_driver"],
      [d["name"] + " cc " + d["compute_capability"] for d in g["devices"]], g.get("error", ""))
env = r["envs"][0]
t = env["packages"].get("torch")
print("torch:", t and {k: t.get(k) for k in ("version", "build", "cuda", "installer")})
for f in env["findings"]:
    print("finding:", f["severity"], f["code"], f["message"])
import torch
ok = (not g["simulated"] and g["driver"] and g["devices"] and t and t["build"] == "cuda"
      and t.get("cuda") == torch.version.cuda)
print("CHECK", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY

echo "== libtorch_cuda's kernels: GPU Canary's reader vs torch.cuda.get_arch_list()"
"$py" - /tmp/gc-check.json <<'PY'
import json, sys, torch
env = json.load(open(sys.argv[1]))["envs"][0]
libs = [l for l in env.get("cuda_libs") or [] if l["package"] == "torch" and l["file"].endswith(("libtorch_cuda.so", "torch_cuda.dll"))]
want = set(torch.cuda.get_arch_list())
print("torch.cuda.get_arch_list():", sorted(want))
if not libs:
    print("no libtorch_cuda among cuda_libs:", [l["file"] for l in env.get("cuda_libs") or []])
    print("ARCHS FAIL")
    sys.exit(1)
l = libs[0]
got = set(l.get("sass") or []) | set(l.get("ptx") or [])
print("reader:", l["file"], "->", l.get("kernels"), "runtime", l.get("cuda_runtime"), l.get("error", ""))
print("missing from the reader:", sorted(want - got), "beyond torch's list:", sorted(got - want))
ok = not l.get("error") and want <= got
print("ARCHS", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY

job='
import sys, time, torch
dev = sys.argv[1]
x = torch.randn(2048, 2048, device=dev)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    y = x @ x
    if dev == "cuda":
        torch.cuda.synchronize()
'
"$cli" watch --json "$prefix" > /tmp/gc-watch.jsonl 2>/tmp/gc-watch.err & watch_pid=$!
"$py" -c "$job" cuda 60 & gpu_pid=$!
CUDA_VISIBLE_DEVICES= "$py" -c "$job" cpu 60 & cpu_pid=$!
trap 'kill $gpu_pid $cpu_pid $watch_pid 2>/dev/null || true' EXIT
sleep 30

echo "== gpucanary ps --json (GPU job $gpu_pid, CPU job $cpu_pid)"
"$cli" ps --json > /tmp/gc-ps.json
"$cli" ps || true
"$py" - /tmp/gc-ps.json "$gpu_pid" "$cpu_pid" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
gpu_pid, cpu_pid = int(sys.argv[2]), int(sys.argv[3])
by = {p["pid"]: p for p in r["processes"]}
for pid, want in ((gpu_pid, {"gpu"}), (cpu_pid, {"cpu", "cuda-idle"})):
    p = by.get(pid)
    print(pid, p and {k: p.get(k) for k in ("verdict", "reason", "gpu_memory_bytes", "cpu_percent", "env", "gpu_libs", "cuda_visible_devices", "findings")})
cpu = by.get(cpu_pid, {})
ok = (by.get(gpu_pid, {}).get("verdict") == "gpu" and cpu.get("verdict") == "cuda-idle"
      and "CUDA_VISIBLE_DEVICES is empty" in cpu.get("reason", "")
      and [f["code"] for f in cpu.get("findings") or []] == ["JOB_ON_CPU"]
      and not by[gpu_pid].get("findings"))
print("PS", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
kill -INT $watch_pid; wait $watch_pid || true
echo "== gpucanary watch --json (the engine alone, while the jobs ran)"
"$py" - /tmp/gc-watch.jsonl "$gpu_pid" "$cpu_pid" <<'PY'
import json, sys
gpu_pid, cpu_pid = int(sys.argv[2]), int(sys.argv[3])
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for e in events:
    print(e["kind"], e.get("pid", ""), e.get("notify"), e["message"][:200])
on_cpu = [e for e in events if e["kind"] == "JOB_ON_CPU"]
ok = any(e.get("pid") == cpu_pid and e.get("notify") for e in on_cpu) and not any(e.get("pid") == gpu_pid for e in on_cpu)
print("WATCH", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
echo "== training runs, watched (scripts/gpu-jobs.py)"
"$py" scripts/gpu-jobs.py "$cli"
echo "test-gpu: PASS"
