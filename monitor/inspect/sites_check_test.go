package inspect_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestSystemSiteVenvOverCPUTorch: a venv made with --system-site-packages
// over an interpreter whose own torch is a CPU build imports that torch:
// with a GPU present it is TORCH_CPU_BUILD, not "torch is not installed".
func TestSystemSiteVenvOverCPUTorch(t *testing.T) {
	base := filepath.Join(t.TempDir(), "py")
	write := func(rel, content string) {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bin/python3.11", "\x7fELF")
	write("lib/python3.11/os.py", "")
	site := filepath.Join(base, "lib", "python3.11", "site-packages")
	write("lib/python3.11/site-packages/torch/version.py", "__version__ = '2.5.1+cpu'\ndebug = False\ncuda = None\ngit_version = 'a'\nhip = None\n")
	write("lib/python3.11/site-packages/torch/lib/libtorch_cpu.so", "\x7fELF")
	write("lib/python3.11/site-packages/torch-2.5.1+cpu.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cpu\n")
	write("lib/python3.11/site-packages/torch-2.5.1+cpu.dist-info/INSTALLER", "pip\n")

	venv := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{}); err != nil {
		t.Fatal(err)
	}
	cfg := "home = " + filepath.Join(base, "bin") + "\ninclude-system-site-packages = true\nversion = 3.11.7\n"
	if err := os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	res := inspect.Check(context.Background(), nil, g, []envsearch.Found{{Path: venv, Via: "argument"}}, health.Options{})
	rep := res.Envs[0]
	if rep.Torch() == nil || rep.Torch().Site != site {
		t.Fatalf("torch = %+v, want the base's from %s", rep.Torch(), site)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.Code == finding.CodeTorchCPUBuild && f.Severity == finding.SeverityError
	}
	if !found || !res.HasErrors() || rep.Verdict != monitor.VerdictError {
		t.Errorf("verdict %s, findings %+v: want TORCH_CPU_BUILD as an error", rep.Verdict, rep.Findings)
	}
}
