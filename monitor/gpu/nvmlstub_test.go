package gpu

// The states the stand-in nvml (testdata/nvmlstub/nvml.c) reads as, through
// nvml.dll under wine (nvml_windows_test.go) and through go-nvml on Linux
// (nvml_stub_linux_test.go): one expectation for both platforms.

// a100State is what the stand-in's a100 scenario reads as.
func a100State() State {
	return State{Source: "nvml", Driver: "550.54.15", CUDADriver: "12.4", Devices: []Device{{
		Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-5b9f1c3e-7d2a-4e6b-9a41-0c8d2f6e1a77", PCIBusID: "0000:07:00.0",
		ComputeCapability: "8.0", MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 3 << 30,
		UtilizationGPU: ptr(uint32(87)), UtilizationMemory: ptr(uint32(40)), TemperatureC: ptr(uint32(61)),
		PowerWatts: ptr(250.5), PowerLimitWatts: ptr(400.0),
		Processes: []Process{{PID: 4242, Type: "compute", UsedMemoryBytes: ptr(uint64(2 << 30)), SMPercent: ptr(uint32(91)), MemPercent: ptr(uint32(30))}},
		// A data-center card answers every health call: at its power
		// cap, 1.5 s of SW thermal slowdown since the driver loaded, on
		// a full Gen4 x16 link, its memory clean.
		ClocksEventReasons: []string{ReasonSWPowerCap},
		Throttle:           &Throttle{SWThermal: ptr(uint64(1_500_000_000)), HWThermal: ptr(uint64(0))},
		MarginTemperatureC: ptr(int32(24)),
		PCIe:               &PCIe{Gen: 4, Width: 16, MaxGen: 4, MaxWidth: 16, CardMaxGen: 4, Replays: ptr(uint64(2))},
		ECC:                &ECC{VolatileDBE: ptr(uint64(0)), RetiredPending: ptr(false), RemapPending: ptr(false), RemapFailure: ptr(false)},
	}}}
}

// rtx4090State is what the rtx4090-wddm scenario reads as: memory n/a
// (nil, never 0) and no utilization per process.
func rtx4090State() State {
	return State{Source: "nvml", Driver: "566.36", CUDADriver: "12.7", Devices: []Device{{
		Name: "NVIDIA GeForce RTX 4090", UUID: "GPU-0e6f3b2a-91c4-4d7e-8b15-3a9c7d2e4f60", PCIBusID: "0000:01:00.0",
		ComputeCapability: "8.9", MemoryTotalBytes: 25757220864, MemoryUsedBytes: 6 << 30,
		UtilizationGPU: ptr(uint32(35)), UtilizationMemory: ptr(uint32(20)), TemperatureC: ptr(uint32(54)),
		PowerWatts: ptr(120.0), PowerLimitWatts: ptr(450.0),
		Processes: []Process{{PID: 5120, Type: "compute"}, {PID: 812, Type: "graphics"}},
		// Idle, its link at Gen1 as power saving leaves it; the rest of
		// its health is not supported.
		ClocksEventReasons: []string{ReasonGPUIdle},
		PCIe:               &PCIe{Gen: 1, Width: 16, MaxGen: 4, MaxWidth: 16, CardMaxGen: 4},
	}}}
}
