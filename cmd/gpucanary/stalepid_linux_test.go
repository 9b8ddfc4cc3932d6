//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// busyJobScript maps the libraries it is given and computes on the CPU;
// it says "ready" once it has used 1.5 s of CPU time, so that its
// lifetime average meets a 1 s window at any load: what settles the
// busy rule is the work it did, not how long the test waited.
const busyJobScript = `import mmap, sys, time
files = [open(p, 'rb') for p in sys.argv[1:]]
maps = [mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) for f in files]
said = False
while True:
    if not said and time.process_time() >= 1.5:
        print('ready', flush=True)
        said = True
`

// TestStalePIDLeavesJobOnCPU: the simulated GPU lists one PID that no
// process runs under (a crashed job) and nothing else, while a real
// process with a CUDA build of torch mapped computes on the CPU. ps
// --json calls the PID orphaned (not a job, GPU_MEMORY_ORPHANED about
// it), and the busy process cuda-idle with JOB_ON_CPU, not "other" for
// another PID namespace; ps's table says orphaned; the report's summary
// counts no job on the GPU.
func TestStalePIDLeavesJobOnCPU(t *testing.T) {
	if procs.HostPIDs("") == nil {
		t.Skip("this proc mount is not the host's PID namespace: a PID the driver lists that no process has cannot be told from another namespace's here")
	}
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("no python3")
	}
	py := strings.TrimSpace(string(exe))
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if err := os.MkdirAll(filepath.Join(cfg, "gpucanary"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "gpucanary", "config.toml"), []byte("cpu_fallback_percent = 1.0\ncpu_fallback_window = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "torch", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	var libs []string
	for _, name := range []string{"libtorch_cpu.so", "libtorch_cuda.so"} {
		libs = append(libs, filepath.Join(lib, name))
		if err := os.WriteFile(libs[len(libs)-1], []byte("\x7fELF not really"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, append([]string{"-c", busyJobScript}, libs...)...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "VIRTUAL_ENV=") || strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=")
	})
	cmd.Env = append(cmd.Env, "VIRTUAL_ENV="+venv)
	if line, _ := startReading(t, cmd).ReadString('\n'); line != "ready\n" {
		t.Fatalf("job said %q, not ready", line)
	}
	busy := cmd.Process.Pid
	sim := simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "memory_used_bytes": 8589934592,
              "processes": [{"pid": %d, "type": "compute", "used_memory_bytes": 8589934592}]}]}`, noSuchPID))

	out, stderr, code := runCLI(t, "--gpu-sim", sim, "ps", "--json")
	if code != exitOK {
		t.Fatalf("ps --json: exit %d: %s", code, stderr)
	}
	var ps struct {
		Processes []struct {
			PID      int
			Name     string
			Verdict  string
			Reason   string
			JobOnCPU bool `json:"job_on_cpu"`
			Findings []struct{ Code string }
		}
		Findings []struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	seen := 0
	for _, p := range ps.Processes {
		switch p.PID {
		case noSuchPID:
			seen++
			if p.Verdict != "orphaned" || p.Name != "(not running)" || p.JobOnCPU {
				t.Errorf("the stale PID: %+v, want orphaned", p)
			}
		case busy:
			seen++
			codes := make([]string, len(p.Findings))
			for i, f := range p.Findings {
				codes[i] = f.Code
			}
			if p.Verdict != "cuda-idle" || !p.JobOnCPU || !slices.Contains(codes, "JOB_ON_CPU") || strings.Contains(p.Reason, "namespace") {
				t.Errorf("the busy CUDA build: %+v, want cuda-idle with JOB_ON_CPU", p)
			}
		}
	}
	if seen != 2 {
		t.Errorf("ps --json lacks the stale PID or the busy job (%d):\n%s", busy, out)
	}
	if len(ps.Findings) != 1 || ps.Findings[0].Code != "GPU_MEMORY_ORPHANED" || !strings.Contains(ps.Findings[0].Message, strconv.Itoa(noSuchPID)) {
		t.Errorf("ps --json machine findings = %+v", ps.Findings)
	}

	out, _, _ = runCLI(t, "--gpu-sim", sim, "ps")
	if !strings.Contains(out, "orphaned  (not running)") || !strings.Contains(out, "JOB_ON_CPU") {
		t.Errorf("ps's table does not say orphaned and JOB_ON_CPU:\n%s", out)
	}

	env := filepath.Join(t.TempDir(), "env")
	if err := writeSpec(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "evidence")
	out, stderr, code = runCLI(t, "--gpu-sim", sim, "report", "-o", dir, env)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "0 jobs on the GPU") {
		t.Errorf("report counts a job on the GPU: %q", out)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "0 jobs on GPU") || !strings.Contains(string(readme), "1 orphaned PID") {
		t.Errorf("README.md's summary does not count the stale PID as orphaned and no job:\n%s", readme)
	}
}
