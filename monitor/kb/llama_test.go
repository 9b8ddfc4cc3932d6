package kb

import (
	"strings"
	"testing"
)

// TestChooseLlamaWheel: the newest of llama-cpp-python's CUDA indexes
// the driver supports, for a release and platform that have one, else
// no index and why.
func TestChooseLlamaWheel(t *testing.T) {
	a100 := []GPU{{Name: "NVIDIA A100", CC: "8.0"}}
	tests := []struct {
		name, version, driver, platform string
		gpus                            []GPU
		tag                             string // "" when none fits
		why                             string
	}{
		{"driver 12.4", "0.3.4", "12.4", PlatformLinuxX86, a100, "cu124", "driver supports"},
		{"driver 12.6, old release", "0.3.4", "12.6", PlatformLinuxX86, a100, "cu124", ""},
		{"driver 12.6, cu125 release", "0.3.22", "12.6", PlatformLinuxX86, a100, "cu125", ""},
		{"driver 13.2", "0.3.35", "13.2", PlatformLinuxX86, a100, "cu132", ""},
		{"driver 13.0, Pascal: no CUDA 13 wheel for it", "0.3.35", "13.0", PlatformLinuxX86, []GPU{{Name: "P100", CC: "6.0"}}, "cu125", ""},
		{"driver 12.2", "0.2.90", "12.2", PlatformLinuxX86, a100, "cu122", ""},
		{"driver 12.0: older than every wheel of 0.2.90", "0.2.90", "12.0", PlatformLinuxX86, a100, "", "older than the oldest CUDA wheel"},
		{"driver 11.8, new release", "0.3.30", "11.8", PlatformLinuxX86, a100, "cu118", ""},
		{"Windows, old release", "0.3.4", "12.4", PlatformWindows, a100, "", "older than its first CUDA wheel for windows-x86_64"},
		{"Windows, new release", "0.3.30", "12.4", PlatformWindows, a100, "cu124", ""},
		{"Windows skips 12.1-12.3", "0.3.30", "12.3", PlatformWindows, a100, "cu118", ""},
		{"macOS", "0.3.4", "12.4", "darwin-arm64", a100, "", "publishes no CUDA wheels for darwin-arm64"},
		{"Linux on ARM", "0.3.4", "12.4", PlatformLinuxARM, a100, "", "no CUDA wheels for linux-aarch64"},
		{"driver CUDA not known", "0.3.4", "", PlatformLinuxX86, a100, "", "CUDA version is not known"},
		{"unreadable version", "x.y", "12.4", PlatformLinuxX86, a100, "", "cannot be read"},
		{"Kepler: built for none of them", "0.3.4", "12.4", PlatformLinuxX86, []GPU{{Name: "Tesla K80", CC: "3.7"}}, "", "built for every GPU here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := ChooseLlamaWheel(tc.version, Machine{DriverCUDA: tc.driver, GPUs: tc.gpus}, tc.platform)
			if ok != (tc.tag != "") || w.Tag != tc.tag {
				t.Fatalf("ChooseLlamaWheel = %+v, %v; want %q", w, ok, tc.tag)
			}
			if w.Reason == "" || !strings.Contains(w.Reason, tc.why) {
				t.Errorf("reason %q lacks %q", w.Reason, tc.why)
			}
			if ok {
				if cuda, _ := CUDAForTag(w.Tag); cuda != w.CUDA {
					t.Errorf("CUDA %s for %s", w.CUDA, w.Tag)
				}
			}
		})
	}
}

// TestLlamaWheelRows: every row has its source, a tag that names its
// CUDA, a known platform, and the rows run newest CUDA first (the choice
// takes the first that fits).
func TestLlamaWheelRows(t *testing.T) {
	prev := ""
	for _, row := range llamaWheels {
		if cuda, ok := CUDAForTag(row.Tag); !ok || cuda != row.CUDA || row.Source == "" || len(row.Since) == 0 {
			t.Errorf("row %+v", row)
		}
		for p := range row.Since {
			if p != PlatformLinuxX86 && p != PlatformWindows {
				t.Errorf("%s: platform %s", row.Tag, p)
			}
		}
		if c, ok := compareCUDA(row.CUDA, prev); prev != "" && (!ok || c >= 0) {
			t.Errorf("%s after CUDA %s: not newest first", row.Tag, prev)
		}
		prev = row.CUDA
	}
}
