package fix_test

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// The machines the runner's tests repair on, as the planner's tests
// (monitor/fixplan's choose_test.go) write them.
func dev(name, cc string) gpu.Device { return gpu.Device{Name: name, ComputeCapability: cc} }

var (
	a100Only  = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	a100D550  = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	a100D535  = gpu.State{Driver: "535.54.03", CUDADriver: "12.2", Devices: []gpu.Device{dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	rtx5090   = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{dev("NVIDIA GeForce RTX 5090", "12.0")}}
	a100And5k = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{dev("NVIDIA A100-SXM4-40GB", "8.0"), dev("NVIDIA GeForce RTX 5090", "12.0")}}
	// asleep5k: the A100 is asleep (NVML was not asked its compute
	// capability) and listed first, as in issue 16.
	asleep5k = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", Asleep: true}, dev("NVIDIA GeForce RTX 5090", "12.0")}}
	k80And5k = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{dev("Tesla K80", "3.7"), dev("NVIDIA GeForce RTX 5090", "12.0")}}
	noGPU    = gpu.State{Source: "none"}
)

func inspect(t *testing.T, root string, spec pyenvtest.Spec) *pyenv.Env {
	t.Helper()
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func anyPath(name string) (string, error) { return name, nil }
