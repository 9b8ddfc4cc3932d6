package fix_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestDeadInterpreterBlocksThePlan: a venv whose interpreter is gone, or
// runs another Python than its packages', gets no installer command
// (pip and uv would both run that interpreter): the plan is blocked,
// says which of the two it is and why, and gives the command that makes
// the environment again, the one the ENV_* finding gives; whatever its
// torch, through Service too, an environment like that is never "nothing
// to fix". A CPU torch (which a reinstall would otherwise replace), a
// healthy CUDA one and a uv environment all take this path.
func TestDeadInterpreterBlocksThePlan(t *testing.T) {
	cpu := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}
	cuda := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}}
	uvCPU := pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}}
	dangling := func(t *testing.T, root string) {
		py := filepath.Join(root, "bin", "python")
		if err := os.Remove(py); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/nonexistent/bin/python3.11", py); err != nil {
			t.Fatal(err)
		}
	}
	upgraded := func(t *testing.T, root string) {
		cfg := filepath.Join(root, "pyvenv.cfg")
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), "version = 3.11.7", "version = 3.12.3", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		spec   pyenvtest.Spec
		mutate func(t *testing.T, root string)
		says   []string
		create string // the recreate command, ENV for the venv
	}{
		{"CPU torch, interpreter gone", cpu, dangling,
			[]string{"the environment's interpreter is missing: ENV/bin/python is a link to /nonexistent/bin/python3.11, which does not exist", "pip and uv both run that interpreter"},
			"rm -f ENV/bin/python && python3.11 -m venv --without-pip ENV"},
		{"uv: CPU torch, interpreter gone", uvCPU, dangling,
			[]string{"the environment's interpreter is missing"},
			"rm -f ENV/bin/python && python3.11 -m venv --without-pip ENV"},
		{"CUDA torch, interpreter gone", cuda, dangling,
			[]string{"the environment's interpreter is missing"},
			"rm -f ENV/bin/python && python3.11 -m venv --without-pip ENV"},
		{"CPU torch, another Python", cpu, upgraded,
			[]string{"the environment's interpreter runs another Python than its packages': it runs Python 3.12", "installed for Python 3.11"},
			"python3.11 -m venv --without-pip ENV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			if err := pyenvtest.Write(root, tt.spec); err != nil {
				t.Fatal(err)
			}
			tt.mutate(t, root)
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			create := strings.ReplaceAll(tt.create, "ENV", root)
			p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: gputest.A100D550, LookPath: anyPath})
			if err != nil {
				t.Fatal(err)
			}
			if p.Blocked == "" || len(p.Argv) > 0 || p.Recreate != create {
				t.Fatalf("plan %+v; want blocked, no argv, recreate %q", p, create)
			}
			for _, s := range append(tt.says, "`"+create+"`") {
				if !strings.Contains(p.Blocked, strings.ReplaceAll(s, "ENV", root)) {
					t.Errorf("blocked %q does not say %q", p.Blocked, s)
				}
			}
			if cmd := (fixplan.Advice{LookPath: anyPath}).Fix(env, gputest.A100D550, finding.CodeTorchCPUBuild); cmd != "" {
				t.Errorf("advice %q; want none", cmd)
			}
			s := fix.Service{GPU: func(context.Context) gpu.State { return gputest.A100D550 },
				Verify: func(*pyenv.Env, gpu.State) []finding.Finding { return nil }}
			pr, err := s.Prepare(context.Background(), root)
			if err != nil || pr.Plan.Recreate != create || s.NothingToFix(pr) {
				t.Errorf("Service: %+v, %v; want the blocked plan, not nothing to fix", pr.Plan, err)
			}
		})
	}
}
