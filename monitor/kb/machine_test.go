package kb

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

func TestCCForName(t *testing.T) {
	tests := map[string]string{
		"NVIDIA GeForce RTX 5090":                           "12.0",
		"NVIDIA GeForce RTX 5070 Ti Laptop GPU":             "12.0",
		"NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "12.0",
		"NVIDIA A100-SXM4-40GB":                             "8.0",
		"NVIDIA A100 80GB PCIe":                             "8.0",
		"NVIDIA A10G":                                       "8.6",
		"NVIDIA A10":                                        "8.6",
		"NVIDIA RTX A6000":                                  "8.6",
		"NVIDIA GeForce RTX 3090":                           "8.6",
		"NVIDIA GeForce RTX 4090":                           "8.9",
		"NVIDIA RTX 6000 Ada Generation":                    "8.9",
		"NVIDIA L40S":                                       "8.9",
		"NVIDIA L4":                                         "8.9",
		"NVIDIA H100 80GB HBM3":                             "9.0",
		"NVIDIA GH200 480GB":                                "9.0",
		"NVIDIA B200":                                       "10.0",
		"NVIDIA GB10":                                       "12.1",
		"Tesla V100-SXM2-16GB":                              "7.0",
		"Tesla T4":                                          "7.5",
		"Quadro RTX 6000":                                   "7.5",
		"Tesla P100-PCIE-16GB":                              "6.0",
		"NVIDIA GeForce GTX 1080 Ti":                        "6.1",
		"Tesla K80":                                         "3.7",
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			if got, ok := CCForName(name); !ok || got != want {
				t.Errorf("CCForName = %q, %v; want %q", got, ok, want)
			}
		})
	}
	for _, name := range []string{"", "GPU 1", "NVIDIA Graphics Device", "NVIDIA GeForce RTX 9090", "NVIDIA A1000"} {
		if got, ok := CCForName(name); ok {
			t.Errorf("CCForName(%q) = %q for a name the table does not know", name, got)
		}
	}
}

// TestMachineOf: every GPU counts; an asleep one (whose compute capability
// NVML was not asked for) is known by its name.
func TestMachineOf(t *testing.T) {
	g := gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{
		{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"},
		{Name: "NVIDIA GeForce RTX 5090", Asleep: true},
		{Name: "NVIDIA Graphics Device", Asleep: true},
	}}
	m := MachineOf(g)
	if m.DriverCUDA != "12.8" || len(m.GPUs) != 3 {
		t.Fatalf("MachineOf = %+v", m)
	}
	if m.GPUs[0].CC != "8.0" || m.GPUs[0].CCFromName {
		t.Errorf("awake GPU = %+v", m.GPUs[0])
	}
	if m.GPUs[1].CC != "12.0" || !m.GPUs[1].CCFromName || !m.GPUs[1].Asleep {
		t.Errorf("asleep RTX 5090 = %+v", m.GPUs[1])
	}
	if m.GPUs[2].CC != "" || len(m.Unknown()) != 1 {
		t.Errorf("unknown asleep GPU = %+v", m.GPUs[2])
	}
	want := "NVIDIA A100-SXM4-40GB (sm_80), NVIDIA GeForce RTX 5090 (sm_120 by its name, asleep) and NVIDIA Graphics Device (compute capability not known, asleep)"
	if got := m.Describe(); got != want {
		t.Errorf("Describe =\n  %s\nwant\n  %s", got, want)
	}
	if !strings.Contains(GPUsCounted, "every GPU") {
		t.Errorf("GPUsCounted = %q", GPUsCounted)
	}
}
