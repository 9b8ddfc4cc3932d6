package kb

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestCUDAForDriver: a driver's CUDA version read off the full-feature
// floors of its platform, the newest it meets; none for a driver older
// than every row or a version that cannot be read.
func TestCUDAForDriver(t *testing.T) {
	tests := []struct {
		driver, platform, want, err string
	}{
		{driver: "535.104.05", platform: "linux", want: "12.2"},
		{driver: "535.54.03", platform: "linux", want: "12.2"}, // exactly 12.2's floor
		{driver: "535.54.02", platform: "linux", want: "12.1"},
		{driver: "550.54.15", platform: "linux", want: "12.4"},
		{driver: "545.23.06", platform: "linux", want: "12.2"}, // supports 12.3, which the table has no row for: a lower bound
		{driver: "570.26", platform: "linux", want: "12.8"},
		{driver: "580.65.06", platform: "linux", want: "13.0"},
		{driver: "580", platform: "linux", want: "12.9"},
		{driver: "535.104.05", platform: "windows", want: "12.1"}, // 12.2 needs 536.25 there
		{driver: "537.13", platform: "windows", want: "12.2"},
		{driver: "300.10", platform: "linux", err: "older than every CUDA version in GPU Canary's table (CUDA 8.0 needs 375.26)"},
		{driver: "535.104.05", platform: "darwin", err: "no driver floors"},
		{driver: "garbage", platform: "linux", err: `the driver version "garbage" cannot be read`},
		{driver: "535.x.1", platform: "linux", err: "cannot be read"},
		{driver: "535..1", platform: "linux", err: "cannot be read"},
		{driver: "", platform: "linux", err: "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.platform+" "+tt.driver, func(t *testing.T) {
			got, err := CUDAForDriver(tt.driver, tt.platform)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("CUDAForDriver = %q, %v; want an error saying %q", got, err, tt.err)
			case tt.err == "" && (err != nil || got != tt.want):
				t.Errorf("CUDAForDriver = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestMachineOfDerivesDriverCUDA: a driver that gave its version but not
// its CUDA version is judged by the CUDA version derived from it, and
// every message naming it says it was derived; one whose version cannot
// be read or is older than every row has none, and says why.
func TestMachineOfDerivesDriverCUDA(t *testing.T) {
	want := map[string]string{"linux": "12.2", "windows": "12.1"}[hostPlatform]
	m := MachineOf(gpu.State{Driver: "535.104.05", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}})
	if m.DriverCUDA != want || m.DriverCUDAFrom != "535.104.05" || m.DriverCUDAUnknown != "" {
		t.Fatalf("MachineOf = %+v, want CUDA %s derived from 535.104.05", m, want)
	}
	label := "CUDA " + want + " (derived from driver 535.104.05, a lower bound)"
	if got := m.DriverCUDALabel(); got != label {
		t.Errorf("DriverCUDALabel = %q, want %q", got, label)
	}
	b := CheckBuild("2.5.1+cu124", "12.4", m)
	if b.Driver.Support != SupportYes || !b.Driver.MinorCompat || !strings.Contains(b.Driver.Reason, label) {
		t.Errorf("cu124 on the derived driver: %+v", b.Driver)
	}
	if c, ok := ChooseVariant("2.5.1", m); !ok || c.Tag != "cu121" || !strings.Contains(c.Reason, "a driver for "+label) {
		t.Errorf("ChooseVariant = %+v, %v", c, ok)
	}

	given := MachineOf(gpu.State{Driver: "535.104.05", CUDADriver: "12.2"})
	if given.DriverCUDAFrom != "" || given.DriverCUDALabel() != "CUDA 12.2" {
		t.Errorf("a CUDA version the driver gave: %+v, %q", given, given.DriverCUDALabel())
	}
	for driver, why := range map[string]string{
		"300.10":  "older than every CUDA version",
		"garbage": `the driver version "garbage" cannot be read`,
		"":        "gave neither its CUDA version nor its own version",
	} {
		m := MachineOf(gpu.State{Driver: driver, Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}})
		if m.DriverCUDA != "" || m.DriverCUDAFrom != "" || !strings.Contains(m.DriverCUDAUnknown, why) || m.DriverCUDALabel() != "" {
			t.Errorf("driver %q: %+v, want no CUDA version and %q", driver, m, why)
		}
		if b := CheckBuild("2.5.1+cu124", "12.4", m); b.Driver.Support != SupportUnknown {
			t.Errorf("driver %q: a build was judged against no CUDA version: %+v", driver, b.Driver)
		}
	}
	if m := MachineOf(gpu.State{}); m.DriverCUDAUnknown != "" {
		t.Errorf("no driver at all: %+v", m)
	}
}
