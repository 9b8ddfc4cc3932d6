package fixplan_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestPlanInstaller: the plan's installer, argv and refusal come from
// pyenv's manager table, for an environment of each manager.
func TestPlanInstaller(t *testing.T) {
	look := func(name string) (string, error) {
		if name == "uv" {
			return "/opt/bin/uv", nil
		}
		return "", exec.ErrNotFound
	}
	tests := []struct {
		name      string
		spec      pyenvtest.Spec
		installer string
		argv0     string // "ENV/bin/python" for the environment's interpreter
		blocked   string // a part of Blocked
	}{
		{name: "uv venv", spec: pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}},
			installer: "uv", argv0: "/opt/bin/uv"},
		{name: "venv with pip", spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}},
			installer: "pip", argv0: "ENV/bin/python"},
		{name: "conda's torch", spec: pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1"}, CondaTorchBuild: "py3.11_cpu_0"},
			installer: "conda", blocked: "(for example `conda install -p 'ENV' pytorch pytorch-cuda=12.4 -c pytorch -c nvidia`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "my env")
			if err := pyenvtest.Write(root, tt.spec); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			p, err := fixplan.NewPlan(fixplan.Request{Env: env, Variant: "cu124", LookPath: look})
			if err != nil {
				t.Fatal(err)
			}
			if p.Installer != tt.installer {
				t.Errorf("Installer = %q, want %q", p.Installer, tt.installer)
			}
			if tt.blocked != "" {
				if want := strings.ReplaceAll(tt.blocked, "ENV", root); !strings.Contains(p.Blocked, want) || len(p.Argv) > 0 {
					t.Errorf("Blocked = %q, Argv = %q; want a refusal holding %q and no argv", p.Blocked, p.Argv, want)
				}
				return
			}
			want0 := strings.ReplaceAll(tt.argv0, "ENV", root)
			if p.Blocked != "" || len(p.Argv) == 0 || p.Argv[0] != want0 {
				t.Fatalf("Argv = %q, Blocked = %q; want %s first", p.Argv, p.Blocked, want0)
			}
			if !slices.Contains(p.Argv, "torch==2.5.1+cu124") || p.Argv[len(p.Argv)-1] != "https://download.pytorch.org/whl/cu124" {
				t.Errorf("Argv = %q: want the torch pin and the cu124 index last", p.Argv)
			}
		})
	}
}
