package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

func inspectAs(t *testing.T, root, home string) *pyenv.Env {
	t.Helper()
	env, err := pyenv.InspectWith(root, pyenv.InspectOptions{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestUserSiteShadowFinding: a CPU torch in the user site hides a conda
// env's CUDA torch. The finding says where the judged torch is loaded
// from and what it hides, and its fix removes that copy (pip's uninstall
// as the env's interpreter), never a reinstall into the env that would
// write over conda's torch and leave the copy in front of it; when the
// torch it hides would not run here either, no command is shown.
func TestUserSiteShadowFinding(t *testing.T) {
	home := t.TempDir()
	user, err := pyenvtest.UserSite(home, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{}
	for _, tt := range []struct {
		name, build, hides, fix string
	}{
		{"conda's CUDA torch under it", "py3.11_cuda12.1_cudnn9.1.0_0", "it hides torch 2.5.1 (CUDA 12.1)", "/bin/python -m pip uninstall -y torch"},
		{"conda's CPU torch under it", "py3.11_cpu_0", "it hides torch 2.5.1 (CPU only)", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			cuda := "12.1"
			if tt.fix == "" {
				cuda = ""
			}
			if err := pyenvtest.Write(root, pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: cuda}, CondaTorchBuild: tt.build}); err != nil {
				t.Fatal(err)
			}
			fs := CheckEnv(inspectAs(t, root, home), a100Driver550, opts)
			var cpu *finding.Finding
			for i := range fs {
				if fs[i].Code == finding.CodeTorchCPUBuild {
					cpu = &fs[i]
				}
			}
			if cpu == nil {
				t.Fatalf("no %s: %s", finding.CodeTorchCPUBuild, dump(fs))
			}
			if !strings.Contains(cpu.Message, "This torch is loaded from "+user+" (the user site, searched before the environment's own site-packages); "+tt.hides) {
				t.Errorf("message does not say where torch is loaded from: %s", cpu.Message)
			}
			if tt.fix == "" && cpu.Fix != "" || tt.fix != "" && cpu.Fix != root+tt.fix {
				t.Errorf("fix = %q, want %q", cpu.Fix, tt.fix)
			}
		})
	}
}

// TestImportPathCode: an import line that changes sys.path by code GPU
// Canary does not follow makes torch's verdict a warning naming the
// file and line; import lines that leave sys.path alone say nothing.
func TestImportPathCode(t *testing.T) {
	for _, tt := range []struct {
		name, pth string
		warn      bool
	}{
		{"sys.path from a variable", "import sys, os; sys.path.insert(0, os.environ['TORCH_SITE'])\n", true},
		{"site.addsitedir", "# shared\nimport site; site.addsitedir('/opt/shared')\n", true},
		{"virtualenv's hook", "import _virtualenv\n", false},
		{"a literal folder GPU Canary follows", "import sys; sys.path.append('/nowhere')\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "venv")
			if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
				t.Fatal(err)
			}
			pth := filepath.Join(root, "lib", "python3.11", "site-packages", "hook.pth")
			if err := os.WriteFile(pth, []byte(tt.pth), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := CheckEnv(inspectAs(t, root, t.TempDir()), a100Driver550, Options{})
			var got *finding.Finding
			for i := range fs {
				if fs[i].Code == finding.CodeImportPathCode {
					got = &fs[i]
				}
			}
			switch {
			case !tt.warn && len(fs) > 0:
				t.Errorf("findings for a line that leaves sys.path alone: %s", dump(fs))
			case tt.warn && (got == nil || got.Severity != finding.SeverityWarning):
				t.Errorf("no %s warning: %s", finding.CodeImportPathCode, dump(fs))
			case tt.warn && (!strings.Contains(got.Message, pth+": line ") || !strings.Contains(got.Message, "bin/python -c 'import torch; print(torch.__file__, torch.__version__)'")):
				t.Errorf("message does not name the file and line or the check: %s", got.Message)
			}
		})
	}
}
