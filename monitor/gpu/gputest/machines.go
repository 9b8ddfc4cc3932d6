// Package gputest holds the machines tests judge and repair on: GPU
// states as NVML would report them, written once for every package whose
// tests need the same A100, RTX 5090 or sleeping GPU.
package gputest

import "github.com/gpucanary/gpucanary/monitor/gpu"

// Dev is a device with a name and a compute capability.
func Dev(name, cc string) gpu.Device { return gpu.Device{Name: name, ComputeCapability: cc} }

var (
	A100Only    = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{Dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	A100D550    = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{Dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	A100D535    = gpu.State{Driver: "535.54.03", CUDADriver: "12.2", Devices: []gpu.Device{Dev("NVIDIA A100-SXM4-40GB", "8.0")}}
	RTX5090     = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{Dev("NVIDIA GeForce RTX 5090", "12.0")}}
	A100And5090 = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{Dev("NVIDIA A100-SXM4-40GB", "8.0"), Dev("NVIDIA GeForce RTX 5090", "12.0")}}
	// Asleep5090: the A100 is asleep (NVML was not asked its compute
	// capability) and listed first, as in issue 16.
	Asleep5090 = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", Asleep: true}, Dev("NVIDIA GeForce RTX 5090", "12.0")}}
	K80And5090 = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{Dev("Tesla K80", "3.7"), Dev("NVIDIA GeForce RTX 5090", "12.0")}}
	NoGPU      = gpu.State{Source: "none"}
)
