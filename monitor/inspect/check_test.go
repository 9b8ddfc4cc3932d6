package inspect

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// uvFound finds every program, uv too, under its own name.
func uvFound(name string) (string, error) { return name, nil }

// TestCheckFixCommands: the rules write the planner's command
// (monitor/fixplan) from the official index, or from the mirror the
// settings name.
func TestCheckFixCommands(t *testing.T) {
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	for _, tc := range []struct {
		name string
		o    health.Options
		want string
	}{
		{"default: fix's plan from the official index", health.Options{Advice: fixplan.Advice{LookPath: uvFound}}, "uv pip install --python " + env + " torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124"},
		{"the settings' mirror", health.Options{Advice: fixplan.Advice{IndexBase: "https://mirror.example/whl", LookPath: uvFound}}, "uv pip install --python " + env + " torch==2.5.1+cu124 --index-url https://mirror.example/whl/cu124"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Check(context.Background(), nil, g, []envsearch.Found{{Path: env, Via: "argument"}}, tc.o)
			var fixes []string
			for _, f := range res.Envs[0].Findings {
				if f.Code == finding.CodeTorchCPUBuild {
					fixes = append(fixes, f.Fix)
				}
			}
			if len(fixes) != 1 || fixes[0] != tc.want {
				t.Errorf("TORCH_CPU_BUILD fixes = %q, want %q", fixes, tc.want)
			}
		})
	}
}

// TestFixCommandOfPip: the default options write the command of the
// environment's own pip.
func TestFixCommandOfPip(t *testing.T) {
	env := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	e, err := pyenv.Inspect(env)
	if err != nil {
		t.Fatal(err)
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	var cmd string
	for _, f := range health.CheckEnv(e, g, health.Options{}) {
		if f.Code == finding.CodeTorchCPUBuild {
			cmd = f.Fix
		}
	}
	if cmd != e.Interpreter()+" -m pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124" {
		t.Errorf("default command %q", cmd)
	}
}
