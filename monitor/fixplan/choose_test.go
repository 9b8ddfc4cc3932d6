package fixplan_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

func anyPath(name string) (string, error) { return name, nil }

// TestPlanChoosesForEveryGPU: a plan is made for every GPU of the machine,
// and when no build of the installed release runs on all of them it is an
// upgrade that says so, never a reinstall of what is there.
func TestPlanChoosesForEveryGPU(t *testing.T) {
	cu124 := &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}
	vision := &pyenvtest.Companion{Version: "0.20.1+cu124", CUDA: "12.4"}
	tests := []struct {
		name     string
		gpu      gpu.State
		spec     pyenvtest.Spec
		pins     []string // "" entries: none
		upgrade  bool
		blocked  string
		reasons  string
		consequ  string
		warning  string // a part of the plan's warnings; "" for none
		unwanted string // a pin that must not be in the plan
	}{
		{name: "A100 alone: the CPU build gets cu124", gpu: gputest.A100D550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}, pins: []string{"torch==2.5.1+cu124"}},
		{name: "A100 and RTX 5090: no cu124 over cu124", gpu: gputest.A100And5090, spec: pyenvtest.Spec{Torch: cu124, Vision: vision},
			pins: []string{"torch==2.7.1+cu128", "torchvision==0.22.1+cu128"}, upgrade: true,
			reasons: "every GPU on this machine counts", consequ: "torchvision changes with it, 0.20.1 → 0.22.1", unwanted: "torch==2.5.1+cu124"},
		{name: "an asleep A100 listed first is still judged", gpu: gputest.Asleep5090, spec: pyenvtest.Spec{Torch: cu124},
			pins: []string{"torch==2.7.1+cu128"}, upgrade: true, reasons: "NVIDIA A100-SXM4-40GB (sm_80 by its name, asleep)"},
		{name: "RTX 5090 with torch 1.13", gpu: gputest.RTX5090,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.13.1+cu117", CUDA: "11.7", Installer: "pip"}},
			pins: []string{"torch==2.7.1+cu128"}, upgrade: true, consequ: "torch changes release, 1.13.1 → 2.7.1"},
		{name: "a Kepler and a Blackwell have no torch in common", gpu: gputest.K80And5090, spec: pyenvtest.Spec{Torch: cu124},
			blocked: "no torch release after 2.5.1 in GPU Canary's table has a build that runs on Tesla K80 (sm_37) and NVIDIA GeForce RTX 5090 (sm_120)"},
		// No 2.9 build runs on a CUDA 12.4 driver in full, and no newer
		// release does: cu126, the closest to the driver, runs through
		// minor-version compatibility, which the plan warns of; never a
		// downgrade.
		{name: "a driver too old for every variant", gpu: gputest.A100D550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.9.1+cpu", Installer: "pip"}},
			pins: []string{"torch==2.9.1+cu126"}, reasons: "cu126 runs, with what the rules warn about", warning: "cu126 runs on this driver only through minor-version compatibility"},
		{name: "a driver too old for any CUDA 12 variant", gpu: gpu.State{Driver: "520.61.05", CUDADriver: "11.8", Devices: []gpu.Device{gputest.Dev("NVIDIA A100-SXM4-40GB", "8.0")}},
			spec:    pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.9.1+cpu", Installer: "pip"}},
			blocked: "cu126 needs a newer driver"},
		// Debian's python3-torch is a pre-release version: pytorch.org
		// has no 1.13.0a0 wheel, so the plan installs the release.
		{name: "a source build's release is installed", gpu: gputest.A100D550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.13.0a0+gitunknown", Installer: "pip"}},
			pins: []string{"torch==1.13.0+cu117"}, unwanted: "torch==1.13.0a0+cu117"},
		{name: "a driver for CUDA 12.2 gets cu121 of 2.5", gpu: gputest.A100D535, spec: pyenvtest.Spec{Torch: cu124}, pins: []string{"torch==2.5.1+cu121"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := pyenvtest.Inspect(t, filepath.Join(t.TempDir(), "env"), tt.spec)
			p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: tt.gpu, LookPath: anyPath})
			if err != nil {
				t.Fatal(err)
			}
			if tt.blocked != "" {
				if !strings.Contains(p.Blocked, tt.blocked) || len(p.Argv) > 0 {
					t.Fatalf("Blocked = %q, Argv = %q; want a block holding %q", p.Blocked, p.Argv, tt.blocked)
				}
				return
			}
			if p.Blocked != "" {
				t.Fatalf("Blocked = %q", p.Blocked)
			}
			for _, pin := range tt.pins {
				if !slices.Contains(p.Argv, pin) {
					t.Errorf("Argv = %q lacks %s", p.Argv, pin)
				}
			}
			if tt.unwanted != "" && slices.Contains(p.Argv, tt.unwanted) {
				t.Errorf("Argv = %q reinstalls %s", p.Argv, tt.unwanted)
			}
			if p.Upgrade != tt.upgrade || (p.Upgrade && len(p.Consequences) == 0) || (!p.Upgrade && len(p.Consequences) > 0) {
				t.Errorf("Upgrade = %v, Consequences = %q", p.Upgrade, p.Consequences)
			}
			if all := strings.Join(p.Reasons, " | "); !strings.Contains(all, tt.reasons) {
				t.Errorf("Reasons = %s\nlack %q", all, tt.reasons)
			}
			if all := strings.Join(p.Consequences, " | "); !strings.Contains(all, tt.consequ) {
				t.Errorf("Consequences = %s\nlack %q", all, tt.consequ)
			}
			if all := strings.Join(p.Warnings, " | "); (tt.warning == "") != (all == "") || !strings.Contains(all, tt.warning) {
				t.Errorf("Warnings = %q, want %q", all, tt.warning)
			}
		})
	}
}

// TestUpgradeInAUVProjectNeedsThePin: an upgrade in a uv project says that
// the lock would put the old torch back, and how to pin the new one.
func TestUpgradeInAUVProjectNeedsThePin(t *testing.T) {
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "pyproject.toml"), []byte("[project]\nname = \"demo\"\nversion = \"0.1.0\"\ndependencies = [\"torch==2.5.1\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := pyenvtest.Inspect(t, filepath.Join(proj, ".venv"), pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "uv"}})
	p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: gputest.RTX5090, LookPath: anyPath})
	if err != nil || !p.Upgrade || p.Installer != "uv" {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	all := strings.Join(p.Consequences, " | ")
	for _, want := range []string{"belongs to the uv project in " + proj, "Require torch==2.7.1", "gpucanary fix --pin-index " + env.Path + " --variant cu128", "uv lock"} {
		if !strings.Contains(all, want) {
			t.Errorf("Consequences = %s\nlack %q", all, want)
		}
	}
}

// TestVariantIsValidated is issue 16 point 3: a variant that cannot exist
// is refused with the variants there are; one that cannot run here is
// planned with a warning.
func TestVariantIsValidated(t *testing.T) {
	cu124 := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}}
	tests := []struct {
		name, variant string
		gpu           gpu.State
		spec          pyenvtest.Spec
		refused       string
		warnings      []string
	}{
		{name: "no CUDA 99.9", variant: "cu999", gpu: gputest.A100Only, spec: cu124, refused: "pytorch.org has no cu999 build of torch 2.5.1: its CUDA variants are cu118, cu121, cu124"},
		{name: "no cu128 wheel of 2.5.1", variant: "cu128", gpu: gputest.A100Only, spec: cu124, refused: "its CUDA variants are cu118, cu121, cu124"},
		{name: "not a CUDA tag", variant: "rocm6.2", gpu: gputest.A100Only, spec: cu124, refused: "not a CUDA variant"},
		{name: "a variant that runs", variant: "cu121", gpu: gputest.A100Only, spec: cu124},
		{name: "newer than the driver", variant: "cu124", gpu: gputest.A100D535, spec: cu124,
			warnings: []string{"cu124 is newer than the driver's CUDA 12.2: it runs through minor-version compatibility"}},
		{name: "newer than the driver's major", variant: "cu130", gpu: gputest.A100D550,
			spec:     pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.9.1+cu126", CUDA: "12.6", Installer: "pip"}},
			warnings: []string{"cu130 will not run here: the driver 550.54.15 supports CUDA 12.4"}},
		{name: "no code for the GPU", variant: "cu124", gpu: gputest.RTX5090, spec: cu124,
			warnings: []string{"cu124 will not run on NVIDIA GeForce RTX 5090 (sm_120)"}},
		{name: "one of two GPUs", variant: "cu124", gpu: gputest.A100And5090, spec: cu124,
			warnings: []string{"cu124 will not run on NVIDIA GeForce RTX 5090 (sm_120)"}},
		{name: "a release newer than the table", variant: "cu130", gpu: gputest.A100Only,
			spec:     pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.16.0+cu130", CUDA: "13.0", Installer: "pip"}},
			warnings: []string{"torch 2.16.0 is newer than GPU Canary's release table, so whether it has a cu130 build is not known", "cu130 will not run here"}},
		{name: "no driver to check against", variant: "cu124", gpu: gputest.NoGPU, spec: cu124,
			warnings: []string{"no NVIDIA driver answered, so whether cu124 runs here was not checked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := pyenvtest.Inspect(t, filepath.Join(t.TempDir(), "env"), tt.spec)
			p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: tt.gpu, Variant: tt.variant, LookPath: anyPath})
			if tt.refused != "" {
				if !errors.Is(err, fixplan.ErrBadVariant) || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("NewPlan = %+v, %v; want ErrBadVariant saying %q", p, err, tt.refused)
				}
				return
			}
			if err != nil || p.Blocked != "" || p.Variant != tt.variant || !slices.Contains(p.Argv, "https://download.pytorch.org/whl/"+tt.variant) {
				t.Fatalf("NewPlan = %+v, %v", p, err)
			}
			if len(p.Warnings) != len(tt.warnings) {
				t.Fatalf("Warnings = %q, want %d", p.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(p.Warnings[i], w) {
					t.Errorf("warning %d = %q, want %q", i, p.Warnings[i], w)
				}
			}
		})
	}
}
