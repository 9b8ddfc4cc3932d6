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
		{driver: "545.23.06", platform: "linux", want: "12.3"},
		{driver: "545.23.05", platform: "linux", want: "12.2"},
		{driver: "525.60.13", platform: "linux", want: "12.0"},
		{driver: "527.41", platform: "windows", want: "12.0"},
		{driver: "556.12", platform: "windows", want: "12.5"},
		{driver: "460.32.03", platform: "linux", want: "11.1"}, // supports 11.2, which the table has no row for: a lower bound
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

// TestDriverVersionRuns: a driver that did not say its CUDA version is
// judged by its own version. Its real CUDA version is at least the one
// derived from it and older than the next row's, so a build newer than
// the lower bound is refused only when the driver's version settles it
// (below the minor-version floor of the build's major, or below a row
// no newer than the build, before CUDA 11); a build that runs on it
// through minor-version compatibility is that, definitely when the next
// row is no newer than the build; anything else could not be confirmed.
func TestDriverVersionRuns(t *testing.T) {
	tests := []struct {
		name, build, driver, platform string
		want                          Support
		minorCompat, unconfirmed      bool
		reason                        string
	}{
		{"cu121 on 525.60.13 runs through minor-version compatibility", "12.1", "525.60.13", "linux", SupportYes, true, false, "it meets their floor, 525.60.13"},
		{"cu120 on 525.60.13 in full", "12.0", "525.60.13", "linux", SupportYes, false, false, "at least the 12.0"},
		{"cu118 on 525.60.13", "11.8", "525.60.13", "linux", SupportYes, false, false, ""},
		{"cu121 below the 12.x floor", "12.1", "520.61.05", "linux", SupportNo, false, false, "older than 525.60.13, their minor-version compatibility floor"},
		{"cu124 on a 12.3 driver", "12.4", "545.23.06", "linux", SupportYes, true, false, "older than CUDA 12.4's floor (550.54.14)"},
		{"cu130 on a 12.8 driver", "13.0", "570.26", "linux", SupportNo, false, false, "older than 580"},
		{"cu121 on Windows 527.41 (12.0) is below Windows' 12.x floor", "12.1", "527.41", "windows", SupportNo, false, false, "528.33"},
		{"cu121 on Windows 528.33", "12.1", "528.33", "windows", SupportYes, true, false, ""},
		// Between two rows: 460.32.03 is a CUDA 11.2 driver, and the table
		// has no 11.2 row: an 11.2 build may run in full.
		{"cu112 between the 11.1 and 11.3 rows", "11.2", "460.32.03", "linux", SupportYes, true, true, "could not be confirmed"},
		{"cu113 above the next row", "11.3", "460.32.03", "linux", SupportYes, true, false, ""},
		// Before CUDA 11 no minor-version compatibility: between the 9.0
		// and 9.2 rows, a 9.1 build may run; a 9.2 one cannot.
		{"cu91 between the 9.0 and 9.2 rows", "9.1", "390.30", "linux", SupportUnknown, false, true, "could not be confirmed"},
		{"cu92 above the next row", "9.2", "390.30", "linux", SupportNo, false, false, "older than CUDA 9.2's floor (396.26)"},
		{"cu102 on a 10.1 driver", "10.2", "435.21", "linux", SupportNo, false, false, "440.33"},
		// Newer than every row: the driver may support more than the table.
		{"cu135 on a driver newer than the table", "13.5", "620.10", "linux", SupportYes, true, true, "it meets their floor, 580"},
		{"cu140 on a driver newer than the table", "14.0", "620.10", "linux", SupportUnknown, false, true, "could not be confirmed"},
		{"cu140 on a 12.8 driver", "14.0", "570.26", "linux", SupportNo, false, false, "older than CUDA 12.9's floor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lower, err := CUDAForDriver(tt.driver, tt.platform)
			if err != nil {
				t.Fatal(err)
			}
			label := "CUDA " + lower + " (derived from driver " + tt.driver + ", a lower bound)"
			got := driverVersionRuns(tt.build, tt.driver, lower, tt.platform, label)
			if got.Support != tt.want || got.MinorCompat != tt.minorCompat || got.Unconfirmed != tt.unconfirmed ||
				!strings.Contains(got.Reason, tt.reason) || !strings.Contains(got.Reason, label) {
				t.Errorf("driverVersionRuns(%s, %s) = %+v", tt.build, tt.driver, got)
			}
		})
	}
}

// TestCheckBuildOnDerivedDriver: issue 2 of the audit. A 525.60.13 driver
// that did not say its CUDA version runs a cu121 torch through
// minor-version compatibility, as it does when it says CUDA 12.0: a
// warning whose repair is cu118, never "will fail". A build the driver's
// version cannot settle is not clean, so no repair chooses it.
func TestCheckBuildOnDerivedDriver(t *testing.T) {
	derived := func(driver string) Machine {
		m := MachineOf(gpu.State{Driver: driver, Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}})
		m.platform = "linux"
		m.DriverCUDA, _ = CUDAForDriver(driver, "linux")
		return m
	}
	m := derived("525.60.13")
	for _, given := range []Machine{m, machine("12.0", "8.0")} {
		b := CheckBuild("2.5.1+cu121", "12.1", given)
		if b.Driver.Support != SupportYes || !b.Driver.MinorCompat || b.Driver.Unconfirmed || b.Clean() {
			t.Errorf("cu121 on %s: %+v", given.DriverCUDALabel(), b.Driver)
		}
		if r, ok := ChooseRepair("2.5.1", given); !ok || r.Tag != "cu118" || !r.Check.Clean() {
			t.Errorf("repair on %s = %+v, %v", given.DriverCUDALabel(), r, ok)
		}
	}
	b := CheckBuild("2.6.0+cu126", "12.6", derived("525.60.13"))
	if b.Driver.Support != SupportYes || !b.Driver.MinorCompat || !strings.Contains(b.Problems(), "only through minor-version compatibility") {
		t.Errorf("cu126 on 525.60.13: %+v, %q", b.Driver, b.Problems())
	}
	unsure := derived("620.10")
	if b := CheckBuild("2.9.1+cu130", "13.0", unsure); !b.Clean() {
		t.Errorf("cu130 on a driver newer than 13.0's floor: %+v", b)
	}
	// A CUDA 13.0 driver that may be a 13.1 or 14.0 one: CUDA 14 builds
	// are not refused on a lower bound.
	if b := CheckBuild("2.16.0+cu140", "14.0", unsure); b.Driver.Support != SupportUnknown || !b.Driver.Unconfirmed ||
		!strings.Contains(b.Problems(), "whether this driver runs cu140 could not be confirmed") {
		t.Errorf("cu140 on 620.10: %+v, %q", b.Driver, b.Problems())
	}
	b = CheckBuild("2.16.0+cu135", "13.5", unsure)
	if b.Driver.Support != SupportYes || !b.Driver.Unconfirmed || !strings.Contains(b.Problems(), "may run on this driver only through minor-version compatibility") {
		t.Errorf("cu135 on 620.10: %+v, %q", b.Driver, b.Problems())
	}
	b = BuildCheck{Tag: "cu135", Driver: b.Driver}
	if b.Clean() {
		t.Errorf("an unconfirmed verdict is clean: %+v", b)
	}
}
