package fixplan_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestDowngradeForALostArchitecture is issue 29 point 6: torch 2.15 has
// no CUDA 12 wheels, so a GTX 1080 Ti (sm_61) has no kernel in it nor in
// any newer release; the plan goes back to 2.14 + cu126, the last release
// with code for it, and says what else changes. uv's
// --torch-backend=auto, choosing by the driver alone, would not.
func TestDowngradeForALostArchitecture(t *testing.T) {
	pascal := gpu.State{Driver: "595.45.04", CUDADriver: "13.2", Devices: []gpu.Device{gputest.Dev("NVIDIA GeForce GTX 1080 Ti", "6.1")}}
	env := pyenvtest.Inspect(t, filepath.Join(t.TempDir(), "env"), pyenvtest.Spec{
		Torch:  &pyenvtest.Torch{DistVersion: "2.15.0+cu132", CUDA: "13.2", Installer: "pip"},
		Vision: &pyenvtest.Companion{Version: "0.30.0+cu132", CUDA: "13.2"},
		// torchaudio's last release is 2.11: it is not pinned.
		Audio: &pyenvtest.Companion{Version: "2.11.0+cu130", CUDA: "13.0"},
	})
	p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: pascal, LookPath: anyPath})
	if err != nil || p.Blocked != "" {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	for _, pin := range []string{"torch==2.14.0+cu126", "torchvision==0.29.0+cu126"} {
		if !slices.Contains(p.Argv, pin) {
			t.Errorf("Argv = %q lacks %s", p.Argv, pin)
		}
	}
	for _, arg := range p.Argv {
		if strings.HasPrefix(arg, "torchaudio") {
			t.Errorf("Argv = %q pins %s, which has no release for torch 2.14", p.Argv, arg)
		}
	}
	if !p.Downgrade || p.Upgrade || p.Variant != "cu126" {
		t.Errorf("Downgrade = %v, Upgrade = %v, Variant = %s", p.Downgrade, p.Upgrade, p.Variant)
	}
	reasons, consequences := strings.Join(p.Reasons, " | "), strings.Join(p.Consequences, " | ")
	if !strings.Contains(reasons, "torch 2.14.0 + cu126 is the last release with code for sm_61") {
		t.Errorf("Reasons = %s", reasons)
	}
	for _, want := range []string{"torch changes release, 2.15.0 → 2.14.0", "torchvision changes with it, 0.30.0 → 0.29.0", "its CUDA changes with it, 13.2 → 12.6"} {
		if !strings.Contains(consequences, want) {
			t.Errorf("Consequences = %s\nlack %q", consequences, want)
		}
	}
	if b, _ := json.Marshal(p); !strings.Contains(string(b), `"downgrade":true`) {
		t.Errorf("JSON %s lacks downgrade", b)
	}
}
