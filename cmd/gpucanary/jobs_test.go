package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestReportCountsJobs: the report counts a job on the GPU as one, not
// a job computing on the CPU (a CUDA build started with
// CUDA_VISIBLE_DEVICES empty) nor a graphics process (one NVML lists as
// graphics, with no ML runtime); before, all three were "3 GPU
// workloads".
func TestReportCountsJobs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("no python3")
	}
	py := strings.TrimSpace(string(exe))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "venv")
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "torch", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"libtorch_cpu.so", "libtorch_cuda.so"} {
		if err := os.WriteFile(filepath.Join(lib, name), []byte("\x7fELF not really"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onGPU := startJob(t, py, venv)
	startJob(t, py, venv, "CUDA_VISIBLE_DEVICES=")
	display := exec.Command("sleep", "120") // stands in for Xorg: no ML runtime
	if err := display.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { display.Process.Kill(); display.Wait() })
	sim := simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "processes": [{"pid": %d, "used_memory_bytes": 2147483648}, {"pid": %d, "type": "graphics", "used_memory_bytes": 104857600}]}]}`,
		onGPU, display.Process.Pid))
	env := filepath.Join(t.TempDir(), "env")
	if err := writeSpec(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "evidence")
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "report", "-o", dir, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Other programs on this machine (other tests) may run ML processes
	// on the CPU too; only the simulated GPU's processes are known.
	if !regexp.MustCompile(`\(1 environment; 1 job on the GPU, [1-9][0-9]* ML process(es)? on the CPU\)`).MatchString(out) {
		t.Errorf("report says %q", out)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "1 job on GPU") {
		t.Errorf("README.md's summary does not count the job:\n%s", readme)
	}
}
