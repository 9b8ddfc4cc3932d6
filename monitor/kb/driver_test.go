package kb

import (
	"strings"
	"testing"
)

func TestDriverFloorFor(t *testing.T) {
	tests := []struct {
		cuda, platform, minor, full string
		ok                          bool
	}{
		{"12.4", "linux", "525.60.13", "550.54.14", true},
		{"12.4", "windows", "528.33", "551.61", true},
		{"13.0", "linux", "580", "580.65.06", true},
		{"11.8", "linux", "450.80.02", "520.61.05", true},
		{"11.8", "windows", "452.39", "520.06", true},
		{"12.1", "linux", "525.60.13", "530.30.02", true},
		{"12.6", "windows", "528.33", "560.76", true},
		{"12.8", "linux", "525.60.13", "570.26", true},
		{"12.9", "linux", "525.60.13", "575.51.03", true},
		{"12.4.1", "linux", "525.60.13", "550.54.14", true},
		{"12.0", "linux", "525.60.13", "525.60.13", true},
		{"12.0", "windows", "528.33", "527.41", true},
		{"12.3", "linux", "525.60.13", "545.23.06", true},
		{"12.5", "windows", "528.33", "555.85", true},
		{"12.7", "linux", "", "", false}, // there is no CUDA 12.7
		{"12.4", "darwin", "", "", false},
		{"", "linux", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.cuda+" "+tt.platform, func(t *testing.T) {
			f, ok := DriverFloorFor(tt.cuda, tt.platform)
			if ok != tt.ok || f.MinorCompat != tt.minor || f.Full != tt.full {
				t.Errorf("DriverFloorFor = %+v, %v", f, ok)
			}
			if ok && f.Source == "" {
				t.Error("no source")
			}
		})
	}
}

func TestDriverRuns(t *testing.T) {
	tests := []struct {
		name, build, driver string
		want                Support
		minorCompat         bool
		reason              string
	}{
		{"newer driver", "12.1", "12.4", SupportYes, false, "at least"},
		{"same CUDA", "12.4", "12.4", SupportYes, false, ""},
		{"newer major driver", "11.8", "12.4", SupportYes, false, ""},
		{"minor compat", "12.8", "12.4", SupportYes, true, "570.26 on Linux"},
		{"cu130 on a 12.8 driver", "13.0", "12.8", SupportNo, false, "driver 580 on Linux"},
		{"cu121 on a CUDA 11 driver", "12.1", "11.4", SupportNo, false, "525.60.13"},
		// Before CUDA 11 there is no minor-version compatibility.
		{"cu102 on a 10.1 driver", "10.2", "10.1", SupportNo, false, "440.33 on Linux"},
		{"cu92 on a 9.0 driver", "9.2", "9.0", SupportNo, false, "CUDA 9.2 or newer"},
		{"cu100 on a 12.4 driver", "10.0", "12.4", SupportYes, false, ""},
		{"cu113 on an 11.1 driver", "11.3", "11.1", SupportYes, true, "465.19.01 on Linux"},
		{"no build CUDA", "", "12.4", SupportUnknown, false, "cannot be compared"},
		{"no driver CUDA", "12.1", "", SupportUnknown, false, "cannot be compared"},
		{"garbage", "twelve", "12.4", SupportUnknown, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := driverRuns(tt.build, tt.driver, "CUDA "+tt.driver)
			if got.Support != tt.want || got.MinorCompat != tt.minorCompat || got.Reason == "" || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("DriverRuns(%q, %q) = %+v", tt.build, tt.driver, got)
			}
		})
	}
}

// String names the answer in the tests' messages.
func (s Support) String() string {
	switch s {
	case SupportYes:
		return "yes"
	case SupportNo:
		return "no"
	default:
		return "unknown"
	}
}
