"""The peer of BenchmarkScan1000: gather what one GPU Canary refresh
gathers, with psutil, the way a Python tool would. Prints the CPU seconds
of one steady-state refresh (the mean of N after a first, warming one).

Usage: /usr/bin/python3 psutil_scan.py N
"""
import sys
import time

import psutil


def refresh(cache):
    rows = []
    for p in psutil.process_iter(["pid", "ppid", "name", "username", "cmdline", "create_time"]):
        try:
            proc = cache.setdefault(p.pid, p)
            cpu = proc.cpu_percent(None)  # over the interval since the last call
            rss = proc.memory_info().rss
            libs = [m.path for m in proc.memory_maps(grouped=True)
                    if "torch" in m.path or "cuda" in m.path or "ggml" in m.path or "llama" in m.path]
            env = proc.environ().get("VIRTUAL_ENV", "")
            rows.append((p.info, cpu, rss, libs, env))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return rows


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cache = {}
    refresh(cache)
    start = time.process_time()
    for _ in range(n):
        rows = refresh(cache)
    spent = (time.process_time() - start) / n
    print(f"{spent:.6f} {len(rows)}")


if __name__ == "__main__":
    main()
