package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGPUJobsHarness runs make test-gpu's training runs (scripts/gpu-jobs.py)
// where no GPU is lent: the same three torch training loops, on the CPU
// with Debian's torch, listed as GPU processes by a --gpu-sim scenario,
// watched by this program's `watch --json`. Their ends must be told as on
// a GPU machine (finished, crashed by SIGKILL, crashed out of GPU memory
// with the log's line), each once, and a run that idles holding its
// memory must be JOB_STALLED; so the harness a GPU session runs is
// known to work before a GPU is lent.
func TestGPUJobsHarness(t *testing.T) {
	t.Parallel()
	const py = "/usr/bin/python3" // Debian's, with python3-torch (make deps-test)
	if out, err := exec.Command(py, "-c", "import torch").CombinedOutput(); err != nil {
		t.Fatalf("%s has no torch (make deps-test installs python3-torch): %v\n%s", py, err, out)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "../../scripts/gpu-jobs.py", exe, "--sim")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "JOBS PASS") {
		t.Fatalf("scripts/gpu-jobs.py --sim: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
