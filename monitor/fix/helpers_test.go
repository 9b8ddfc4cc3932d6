package fix

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// The GPUs the runner's tests plan for, as the planner's tests
// (monitor/fixplan) write them.
func device(name, cc string) gpu.Device {
	return gpu.Device{Name: name, ComputeCapability: cc, MemoryTotalBytes: 40 << 30}
}

var (
	a100Driver550 = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
	rtx5090       = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device("NVIDIA GeForce RTX 5090", "12.0")}}
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
