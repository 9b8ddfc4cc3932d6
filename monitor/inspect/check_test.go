package inspect

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCheckFixCommands: health cannot plan a reinstall, so Check gives it
// fix's planner when the caller passes no builder, and the caller's
// builder when it passes one.
func TestCheckFixCommands(t *testing.T) {
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	own := func(e *pyenv.Env, _ gpu.State) string { return "my-fixer " + e.Path }
	for _, tc := range []struct {
		name string
		o    health.Options
		want string
	}{
		{"default: fix's plan from the official index", health.Options{}, "uv pip install --python " + env + " torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124"},
		{"the caller's builder", health.Options{Reinstall: own}, "my-fixer " + env},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Check(context.Background(), g, []pyenv.Found{{Path: env, Via: "argument"}}, tc.o)
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

// TestWithFixCommands: the default is filled only when the caller gave no
// builder, and the rest of the options are kept.
func TestWithFixCommands(t *testing.T) {
	env := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	e, err := pyenv.Inspect(env)
	if err != nil {
		t.Fatal(err)
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	getenv := func(string) string { return "x" }
	o := WithFixCommands(health.Options{Getenv: getenv})
	if o.Reinstall == nil || o.Getenv == nil || o.Getenv("") != "x" {
		t.Fatalf("defaults: %+v", o)
	}
	if cmd := o.Reinstall(e, g); cmd != e.Interpreter()+" -m pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124" {
		t.Errorf("default command %q", cmd)
	}
	own := WithFixCommands(health.Options{Reinstall: func(*pyenv.Env, gpu.State) string { return "mine" }})
	if own.Reinstall(e, g) != "mine" {
		t.Error("the caller's builder was replaced")
	}
}
