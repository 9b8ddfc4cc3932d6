package main

import (
	"encoding/json"
	"testing"
)

// TestEveryCommandDescribesTheGPUAlike: `ps --json` names a GPU's
// architecture and the CUDA version derived from a driver that gave none,
// as `check --json` does for the same GPU, because both read it through
// the one annotated backend (openGPU, kb.Annotated).
func TestEveryCommandDescribesTheGPUAlike(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir()) // no environment to find: the GPU is what is compared
	// A driver that gives its version but not its CUDA version, so the
	// CUDA version is derived.
	sim := simFile(t, `{"driver": "535.104.05",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}`)
	type gpuJSON struct {
		CUDADriver        string `json:"cuda_driver"`
		CUDADriverDerived string `json:"cuda_driver_derived"`
		Devices           []struct {
			Architecture string `json:"architecture"`
		} `json:"devices"`
	}
	read := func(args ...string) gpuJSON {
		t.Helper()
		out, stderr, code := runCLI(t, append([]string{"--gpu-sim", sim}, args...)...)
		if code > 1 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var v struct {
			GPU gpuJSON `json:"gpu"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return v.GPU
	}
	check := read("check", "--json")
	if check.CUDADriver != "" || check.CUDADriverDerived == "" || len(check.Devices) != 1 || check.Devices[0].Architecture != "Ampere" {
		t.Fatalf("check --json's GPU = %+v, want Ampere and a derived CUDA version", check)
	}
	ps := read("ps", "--json")
	if ps.CUDADriverDerived != check.CUDADriverDerived || len(ps.Devices) != 1 || ps.Devices[0].Architecture != check.Devices[0].Architecture {
		t.Errorf("ps --json's GPU = %+v, check --json's = %+v", ps, check)
	}
}
