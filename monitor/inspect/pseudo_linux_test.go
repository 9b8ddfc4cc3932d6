package inspect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestVersionPyOnProcfsIsRefused: `check` on an environment whose
// torch/version.py is a symlink to a procfs file (standing for
// /proc/kmsg, whose read never returns; reading that one as root would
// drain the kernel log) reports it unreadable, naming procfs, instead of
// reading it.
func TestVersionPyOnProcfsIsRefused(t *testing.T) {
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
		t.Fatal(err)
	}
	version, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "torch", "version.py"))
	if err != nil || len(version) != 1 {
		t.Fatalf("version.py: %v %v", version, err)
	}
	if err := os.Remove(version[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/status", version[0]); err != nil {
		t.Fatal(err)
	}
	res := Check(context.Background(), nil, gpu.State{}, []envsearch.Found{{Path: venv}}, health.Options{})
	var said []string
	for _, f := range res.Envs[0].Findings {
		said = append(said, f.Code+": "+f.Message)
		if f.Code == finding.CodeEnvUnreadable && strings.Contains(f.Message, "version.py") &&
			strings.Contains(f.Message, "procfs") && strings.Contains(f.Message, "pseudo file system") {
			return
		}
	}
	t.Errorf("version.py on procfs was not refused as such:\n%s", strings.Join(said, "\n"))
}
