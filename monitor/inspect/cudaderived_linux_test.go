package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestDriverWithoutCUDAVersion: a --gpu-sim scenario that gives the
// driver's version but not its CUDA version. 535.104.05 is judged as CUDA
// 12.2 (Linux floors), so a cu124 torch gets its driver finding, saying
// the version was derived; check --json keeps cuda_driver as given ("")
// and adds cuda_driver_derived. A driver older than every row, or one
// whose version cannot be read, derives nothing, and the build's finding
// says the driver could not be checked.
func TestDriverWithoutCUDAVersion(t *testing.T) {
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4"}}); err != nil {
		t.Fatal(err)
	}
	// check judges the venv on the GPU a scenario with driver gives, or,
	// for a driver version a scenario refuses (it is not one), on the
	// state an NVML that answered it would give.
	check := func(t *testing.T, driver string) (monitor.CheckResult, map[string]finding.Finding, map[string]any) {
		t.Helper()
		scenario := fmt.Sprintf(`{"driver": %q, "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960}]}`, driver)
		g, err := gpu.ParseScenario([]byte(scenario))
		if err != nil {
			g = gpu.State{Driver: driver, Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0", MemoryTotalBytes: 42949672960}}}
		}
		res := Check(context.Background(), nil, g, []envsearch.Found{{Path: venv}}, health.Options{})
		found := map[string]finding.Finding{}
		for _, f := range res.Envs[0].Findings {
			found[f.Code] = f
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ GPU map[string]any }
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return res, found, out.GPU
	}

	t.Run("derived", func(t *testing.T) {
		_, found, js := check(t, "535.104.05")
		f, ok := found[finding.CodeDriverTooOld]
		if !ok || f.Severity != finding.SeverityWarning || !strings.Contains(f.Message, "supports CUDA 12.2 (derived from driver 535.104.05, a lower bound)") {
			t.Errorf("cu124 on driver 535.104.05: %+v", found)
		}
		if _, unchecked := found[finding.CodeTorchBuildUnchecked]; unchecked {
			t.Errorf("the derived version was not used: %+v", found)
		}
		if js["cuda_driver"] != "" || js["cuda_driver_derived"] != "12.2" || js["driver"] != "535.104.05" {
			t.Errorf("check --json's gpu: %v", js)
		}
	})
	for driver, why := range map[string]string{
		"300.10":  "older than every CUDA version in GPU Canary's table",
		"r535.x1": `the driver version "r535.x1" cannot be read`,
	} {
		t.Run(driver, func(t *testing.T) {
			_, found, js := check(t, driver)
			if _, ok := found[finding.CodeDriverTooOld]; ok {
				t.Errorf("judged against a CUDA version nobody gave: %+v", found)
			}
			f, ok := found[finding.CodeTorchBuildUnchecked]
			if !ok || !strings.Contains(f.Message, "could not be checked against the NVIDIA driver "+driver) || !strings.Contains(f.Message, why) {
				t.Errorf("the driver check's finding: %+v", found)
			}
			if _, derived := js["cuda_driver_derived"]; derived || js["cuda_driver"] != "" {
				t.Errorf("check --json's gpu: %v", js)
			}
		})
	}
}
