//go:build linux

package fixplan

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestDistroTorchIsNotPipsToChange: the plan for Debian's python3-torch
// in /usr (externally managed) runs nothing, names no interpreter that
// is not there, and says the distribution's way (apt) and the venv
// that holds a CUDA build instead.
// a100 is the GPU the runner's Linux tests plan for.
var a100 = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}

func TestDistroTorchIsNotPipsToChange(t *testing.T) {
	for _, p := range []string{"/usr/lib/python3/dist-packages/torch/__init__.py", "/usr/lib/python3.11/EXTERNALLY-MANAGED"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("SKIPPED: no Debian python3-torch in an externally managed /usr here (%v): apt install python3-torch python3.11 to run this test", err)
		}
	}
	env, err := pyenv.Inspect("/usr")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(Request{Env: env, GPU: a100, LookPath: func(string) (string, error) { return "", exec.ErrNotFound }})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Argv) > 0 || p.Blocked == "" {
		t.Fatalf("plan for /usr: argv %q, blocked %q; want it blocked with nothing to run", p.Argv, p.Blocked)
	}
	for _, want := range []string{"sudo apt install --reinstall python3-torch", "-m venv ~/.venvs/torch", "--index-url https://download.pytorch.org/whl/cu", "EXTERNALLY-MANAGED"} {
		if !strings.Contains(p.Blocked, want) {
			t.Errorf("the plan says %q; want %q in it", p.Blocked, want)
		}
	}
	if strings.Contains(p.Blocked, "--python /usr") || strings.Contains(p.Blocked, "/usr/bin/python ") {
		t.Errorf("the plan names pip for /usr: %q", p.Blocked)
	}
	if cmd := (Advice{}).Fix(env, a100, finding.CodeTorchCPUBuild); cmd != "" {
		t.Errorf("the advice for /usr is a command: %q", cmd)
	}
}
