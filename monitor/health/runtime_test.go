package health

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestRuntimeFindings: a CUDA torch without the NVIDIA runtime wheels its
// METADATA requires here is TORCH_INSTALL_BROKEN, an error (import fails),
// naming the wheels, the library import fails on and the exact command
// that installs them; one with other versions of them is a warning; a CPU
// build, a requirement whose marker does not match and one whose marker
// cannot be read raise nothing.
func TestRuntimeFindings(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("torch's nvidia-* requirements apply on x86_64 only")
	}
	cuda := func(edit func(*pyenvtest.Torch)) *pyenvtest.Torch {
		tw := &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}
		if edit != nil {
			edit(tw)
		}
		return tw
	}
	noDeps := func(tw *pyenvtest.Torch) { tw.NoDeps = true }
	const plain = "ENV/bin/python -m pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124"
	tests := []struct {
		name     string
		spec     pyenvtest.Spec
		gpu      gpu.State
		requires []string // torch's Requires-Dist instead of the release's, when set
		want     []want
	}{
		{name: "every runtime wheel installed", spec: pyenvtest.Spec{Torch: cuda(nil)}, gpu: a100Driver550},
		{name: "missing wheels", spec: pyenvtest.Spec{Torch: cuda(noDeps)}, gpu: a100Driver550,
			want: []want{{code: finding.CodeTorchInstallBroken, severity: finding.SeverityError,
				message: "torch: torch 2.5.1+cu124 requires 7 CUDA runtime wheels of NVIDIA's that are not installed: nvidia-cuda-nvrtc-cu12==12.4.127, nvidia-cuda-runtime-cu12==12.4.127, nvidia-cuda-cupti-cu12==12.4.127, nvidia-cublas-cu12==12.4.127, nvidia-cufft-cu12==12.4.127, nvidia-curand-cu12==12.4.127, nvidia-cudnn-cu12==9.1.0.70. `import torch` fails with \"libcublas.so.12: cannot open shared object file\"",
				fix:     plain}}},
		{name: "one missing wheel", spec: pyenvtest.Spec{Torch: cuda(func(tw *pyenvtest.Torch) { tw.OmitRuntime = []string{"nvidia-cudnn-cu12"} })}, gpu: a100Driver550,
			want: []want{{code: finding.CodeTorchInstallBroken, severity: finding.SeverityError, message: "not installed: nvidia-cudnn-cu12==9.1.0.70. `import torch` fails with \"libcudnn.so.9: cannot open shared object file\"", fix: plain}}},
		{name: "a wrong version", spec: pyenvtest.Spec{Torch: cuda(nil), Nvidia: map[string]string{"nvidia-cudnn-cu12": "9.5.1.17"}}, gpu: a100Driver550,
			want: []want{{code: finding.CodeTorchInstallBroken, severity: finding.SeverityWarning, message: "(nvidia-cudnn-cu12==9.1.0.70 is required, 9.5.1.17 is installed)", fix: plain}}},
		{name: "missing wheels with no driver: said, with no command", spec: pyenvtest.Spec{Torch: cuda(noDeps)}, gpu: noDriver,
			want: []want{{code: finding.CodeTorchInstallBroken, severity: finding.SeverityError, message: "installing torch's pins again from its index without --no-deps installs them", nofix: true}}},
		{name: "a CPU build requires none", gpu: noDriver, spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip\n"}},
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityInfo, message: "CPU-only build"}}},
		{name: "a marker that does not match", spec: pyenvtest.Spec{Torch: cuda(noDeps)}, gpu: a100Driver550,
			requires: []string{`nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "aarch64"`}},
		{name: "a marker that cannot be read", spec: pyenvtest.Spec{Torch: cuda(noDeps)}, gpu: a100Driver550,
			requires: []string{`nvidia-cublas-cu12==12.4.5.8; platform_system = "Linux"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			if tt.requires != nil {
				tw := *tt.spec.Torch // the cases share their Torch
				tw.Requires = tt.requires
				tt.spec.Torch = &tw
			}
			if err := pyenvtest.Write(root, tt.spec); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			got := CheckEnv(env, tt.gpu, Options{})
			if len(got) != len(tt.want) {
				t.Fatalf("got %d findings, want %d:\n%s", len(got), len(tt.want), dump(got))
			}
			for i, w := range tt.want {
				f := got[i]
				if f.Code != w.code || f.Severity != w.severity || !strings.Contains(f.Message, w.message) {
					t.Errorf("finding %s/%s %q, want %s/%s holding %q", f.Code, f.Severity, f.Message, w.code, w.severity, w.message)
				}
				if wantFix := strings.ReplaceAll(w.fix, "ENV", env.Path); f.Fix != wantFix && !(w.fix == "" && !w.nofix) {
					t.Errorf("fix %q, want %q", f.Fix, wantFix)
				}
				if f.Severity == finding.SeverityError && !finding.FixedByReinstall(f.Code) {
					t.Errorf("%s is not fixed by a reinstall: a repair would not be verified against it", f.Code)
				}
			}
		})
	}
}
