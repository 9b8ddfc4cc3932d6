#!/usr/bin/env python3
"""Real training runs watched by `gpucanary watch --json` (make test-gpu).

Three small torch training loops run on the GPU and end three ways, each
checked against the JOB_ENDED event the engine raises:

  finish  trains, then exits 0                 -> finished
  killed  trains until SIGKILL                 -> crashed
  oom     trains, then allocates past the GPU's memory and dies with
          torch.OutOfMemoryError, its Traceback in its own log file
                                               -> crashed, out of GPU memory

then a fourth trains, then idles holding its GPU memory (a stalled run):

  stall   computes, then sleeps with 2 GiB held    -> JOB_STALLED, "sleeping"

and the GPU's health as GPU Canary reads it (clocks-event reasons, PCIe
link, temperature margin, ECC) is printed.

    scripts/gpu-jobs.py CLI [--sim]

--sim runs the same jobs on the CPU (any torch, Debian's python3-torch
too) and lists their PIDs as GPU processes in a --gpu-sim scenario, the
oom job raising the same exception type: the harness itself is then tested
on a machine without a GPU (cmd/gpucanary's TestGPUJobsHarness).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

JOB = r'''
import sys, time, torch
mode, dev, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
print("job", mode, "on", dev, "torch", torch.__version__, flush=True)
n = 1024 if dev == "cuda" else 64  # --sim: the harness is tested, not the CPU
w = torch.randn(n, n, device=dev, requires_grad=True)
opt = torch.optim.SGD([w], lr=1e-4)
end = time.time() + seconds
step = 0
while time.time() < end or mode == "killed":
    x = torch.randn(256, n, device=dev)
    loss = (x @ w).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if dev == "cuda":
        torch.cuda.synchronize()
    else:
        time.sleep(0.05)
    step += 1
    if step % 100 == 0:
        print("step", step, "loss", float(loss), flush=True)
if mode == "stall":
    held = torch.empty(2 << 30, dtype=torch.uint8, device=dev)  # held while idle
    print("idle", flush=True)
    time.sleep(600)
if mode == "oom":
    if dev == "cuda":
        total = torch.cuda.get_device_properties(0).total_memory
        hog = torch.empty(int(total * 1.5), dtype=torch.uint8, device="cuda")
    else:
        # The same exception type, raised where a GPU is not lent.
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 120.00 GiB (GPU 0; 79.10 GiB total capacity) [simulated]")
print("done", step, "steps", flush=True)
'''

GiB = 1 << 30


def sim_scenario(pids, util=90):
    procs = [{"pid": p, "used_memory_bytes": 2 * GiB, "type": "compute"} for p in pids]
    return {"driver": "550.54.15", "cuda_driver": "12.4", "devices": [{
        "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-sim-h100", "compute_capability": "9.0",
        "memory_total_bytes": 80 * GiB, "memory_used_bytes": (1 + 2 * len(pids)) * GiB,
        "utilization_gpu_percent": util if pids else 0, "temperature_c": 60,
        "power_watts": 500.0, "power_limit_watts": 700.0, "processes": procs}]}


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def events_of(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    except FileNotFoundError:
        pass
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cli, sim = sys.argv[1], "--sim" in sys.argv[2:]
    dev = "cpu" if sim else "cuda"
    # The runs' lengths and the settings' windows, in units of 2 s on a
    # GPU; under --sim, where only the harness is tested, of 1 s.
    unit = 1 if sim else 2
    work = tempfile.mkdtemp(prefix="gpucanary-jobs-")
    conf = os.path.join(work, "config", "gpucanary")
    os.makedirs(conf)
    with open(os.path.join(conf, "config.toml"), "w") as f:
        f.write('refresh = "500ms"\njob_min_runtime = "%ds"\nstall_arm_after = "%ds"\nstall_window = "%ds"\ndiscover_home = false\n'
                % (unit * 5 // 2, unit * 3 // 2, unit * 5 // 2))
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(work, "config"),
               XDG_STATE_HOME=os.path.join(work, "state"), XDG_CACHE_HOME=os.path.join(work, "cache"))
    args = [cli]
    scenario = os.path.join(work, "gpu.json")
    if sim:
        write_json(scenario, sim_scenario([]))
        args += ["--gpu-sim", scenario]
    prefix = sys.prefix

    print("== the GPU's health as GPU Canary reads it")
    out = subprocess.run(args + ["check", "--json", prefix], env=env, capture_output=True, text=True)
    try:
        g = json.loads(out.stdout)["gpu"]
    except (ValueError, KeyError):
        print("check --json gave no GPU state:", out.stdout[:300], out.stderr[:300])
        return 1
    print("gpu:", "simulated" if g.get("simulated") else "real", g.get("driver"), g.get("error", ""))
    for d in g.get("devices") or []:
        print(" ", d.get("index"), d.get("name"), {k: d.get(k) for k in (
            "clocks_event_reasons", "throttle_ns", "margin_temperature_c", "pcie", "ecc", "xids", "lost")})

    watch_out = os.path.join(work, "watch.jsonl")
    with open(watch_out, "w") as wo, open(os.path.join(work, "watch.err"), "w") as we:
        watch = subprocess.Popen(args + ["watch", "--json", prefix], env=env, stdout=wo, stderr=we)
    jobs, stalled = {}, None
    try:
        time.sleep(2)  # watch's first read
        train = os.path.join(work, "train.py")
        with open(train, "w") as f:
            f.write(JOB)
        for mode, seconds in (("finish", 6 * unit), ("killed", 0), ("oom", 5 * unit)):
            log = open(os.path.join(work, mode + ".log"), "w")
            jobs[mode] = subprocess.Popen([sys.executable, train, mode, dev, str(seconds)],
                                          stdout=log, stderr=log, cwd=work)
            log.close()
        if sim:
            write_json(scenario, sim_scenario([p.pid for p in jobs.values()]))
        # The killed job dies at 6 units, by which time it has run past
        # job_min_runtime however loaded the machine.
        time.sleep(6 * unit)
        jobs["killed"].send_signal(signal.SIGKILL)
        deadline = time.time() + 90
        want = {p.pid: m for m, p in jobs.items()}
        ended = {}
        while time.time() < deadline and len(ended) < len(want):
            # Not reaped until told: a zombie's exit status is what Linux
            # shows another process (a shell reaping at once leaves GPU
            # Canary the log and the GPU's memory to go by).
            for e in events_of(watch_out):
                if e.get("kind") == "JOB_ENDED" and e.get("pid") in want:
                    ended.setdefault(e["pid"], e)
            time.sleep(0.5)
        if sim:
            write_json(scenario, sim_scenario([]))

        # A run that computes, then idles holding its memory: stalled.
        log = open(os.path.join(work, "stall.log"), "w")
        jobs["stall"] = stall = subprocess.Popen([sys.executable, train, "stall", dev, str(6 * unit)],
                                                 stdout=log, stderr=log, cwd=work)
        log.close()
        if sim:
            write_json(scenario, sim_scenario([stall.pid]))
        deadline = time.time() + 120
        idle = False
        while time.time() < deadline and stalled is None:
            if sim and not idle and "idle" in open(os.path.join(work, "stall.log")).read():
                idle = True
                write_json(scenario, sim_scenario([stall.pid], util=0))  # the GPU as NVML would show it
            for e in events_of(watch_out):
                f = e.get("finding") or {}
                if e.get("kind") == "FINDING_RAISED" and f.get("code") == "JOB_STALLED" and e.get("pid") == stall.pid:
                    stalled = e
            time.sleep(0.5)
        stall.kill()
        if sim:
            write_json(scenario, sim_scenario([]))
    finally:
        for p in jobs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(20)
        except subprocess.TimeoutExpired:
            watch.kill()

    print("== JOB_ENDED as watch --json said it")
    told = {}
    for e in events_of(watch_out):
        if e.get("kind") == "JOB_ENDED":
            told[e.get("pid")] = told.get(e.get("pid"), 0) + 1
    ok = True
    for pid, n in told.items():
        if n != 1:
            print("PID", pid, "was told", n, "times"); ok = False
    for mode, p in jobs.items():
        if mode == "stall":
            continue
        e = ended.get(p.pid)
        print(mode, "pid", p.pid, "exit", p.returncode, "->", e and e.get("message"))
        msg = (e or {}).get("message", "")
        if e is None:
            print("  no JOB_ENDED event"); ok = False
        elif mode == "finish" and "finished" not in msg:
            print("  want finished"); ok = False
        elif mode in ("killed", "oom") and "crashed" not in msg:
            print("  want crashed"); ok = False
        if mode == "oom" and e is not None and ("out of GPU memory" not in msg or "OutOfMemoryError" not in msg):
            print("  want 'out of GPU memory' and the log's OutOfMemoryError line"); ok = False
    print("== JOB_STALLED as watch --json said it")
    print("stall pid", jobs["stall"].pid, "->", stalled and stalled.get("message"))
    if stalled is None:
        print("  no JOB_STALLED event"); ok = False
    elif "sleeping" not in stalled.get("message", ""):
        print("  want it said sleeping"); ok = False
    if not ok:
        for name in ("watch.err", "oom.log", "stall.log"):
            with open(os.path.join(work, name)) as f:
                print("--", name, "--\n" + f.read()[-2000:])
    print("JOBS", "PASS" if ok else "FAIL")
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("kept:", work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
