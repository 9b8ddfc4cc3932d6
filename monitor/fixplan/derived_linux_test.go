package fixplan_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestPlanOnDerivedDriverCUDA: where the driver gave its version but not
// its CUDA version, the CUDA version derived from it (on Linux's floors)
// is a lower bound. The plan says "at least CUDA X.Y (derived from the
// driver version)", never a version as the driver's word, and says a
// variant will not run, or will fail, only where the driver's version
// settles it; what it cannot settle is "may" or "could not be
// confirmed".
func TestPlanOnDerivedDriverCUDA(t *testing.T) {
	a100 := func(driver string) gpu.State {
		return gpu.State{Driver: driver, Devices: []gpu.Device{gputest.Dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	}
	for _, tt := range []struct {
		name, driver, torch, cuda, variant string
		says                               string // in Warnings, or Reasons when no variant is asked for
		settled                            bool   // the driver's version settles it: "will" may be said
	}{
		// Issue 29: 620.10 is past every row (13.3's floor is 610.43.02);
		// 590.44.01, the example before, is 13.1's floor now.
		{name: "a CUDA 13.5 build on a driver of at least 13.3", driver: "620.10", torch: "2.16.0+cu130", cuda: "13.0", variant: "cu135",
			says: "cu135 may run here only through minor-version compatibility: the driver 620.10 supports at least CUDA 13.3 (derived from the driver version), and whether it supports CUDA 13.5 in full could not be confirmed; if it does not, kernels compiled just in time may fail"},
		{name: "a CUDA major the driver's version cannot settle", driver: "620.10", torch: "2.16.0+cu130", cuda: "13.0", variant: "cu140",
			says: "whether cu140 runs here could not be confirmed: the driver 620.10 supports at least CUDA 13.3 (derived from the driver version)"},
		{name: "below the 12.x floor", driver: "520.61.05", torch: "2.5.1+cu121", cuda: "12.1", variant: "cu124", settled: true,
			says: "cu124 will not run here: the driver 520.61.05 supports at least CUDA 11.8 (derived from the driver version), and CUDA 12 builds need a driver for CUDA 12.x"},
		{name: "below cu124's floor in full", driver: "525.60.13", torch: "2.5.1+cu121", cuda: "12.1", variant: "cu124", settled: true,
			says: "cu124 runs here only through minor-version compatibility, and kernels compiled just in time will fail: the driver 525.60.13 supports at least CUDA 12.0 (derived from the driver version), and its version is below CUDA 12.4's floor"},
		{name: "chosen for the driver", driver: "525.60.13", torch: "2.5.1+cu121", cuda: "12.1",
			says: "cu118 is the newest CUDA variant of torch 2.5.1 that runs on NVIDIA A100-SXM4-40GB (sm_80) with a driver for CUDA 12.0 (derived from driver 525.60.13, a lower bound)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := pyenvtest.Inspect(t, filepath.Join(t.TempDir(), "venv"), pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: tt.torch, CUDA: tt.cuda, Installer: "pip"}})
			p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: a100(tt.driver), Variant: tt.variant, LookPath: anyPath})
			if err != nil || p.Blocked != "" {
				t.Fatalf("plan %+v, %v", p, err)
			}
			said := strings.Join(p.Warnings, " | ")
			if tt.variant == "" {
				said = strings.Join(p.Reasons, " | ")
			}
			if !strings.Contains(said, tt.says) {
				t.Errorf("plan says\n  %s\nwithout\n  %s", said, tt.says)
			}
			all := strings.Join(append(append([]string{}, p.Warnings...), p.Reasons...), " | ")
			if !tt.settled && (strings.Contains(all, "will fail") || strings.Contains(all, "will not run")) {
				t.Errorf("a lower bound is taken for the driver's word:\n  %s", all)
			}
		})
	}
}
