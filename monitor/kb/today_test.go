package kb

import (
	"strings"
	"testing"
)

// Issue 29: the releases of 2026 (torch 2.12–2.15, cu132, CUDA 13.x
// drivers) are judged from the tables, and a release newer than them by
// inference.
func TestReleasesOf2026(t *testing.T) {
	on := func(wheel, driver string, ccs ...string) Machine {
		m := machine(driver, ccs...)
		m.wheel = wheel
		return m
	}
	tests := []struct {
		name, torch, cuda string
		m                 Machine
		clean             bool
		unsupported, ptx  int
		driver            Support
		inferred          string // "" when the release is known
	}{
		{"2.14 cu132 on an RTX 5090 with a 13.2 driver", "2.14.0+cu132", "13.2", on(PlatformLinuxX86, "13.2", "12.0"), true, 0, 0, SupportYes, ""},
		{"2.14 cu132 on an RTX 5090 with a 12.8 driver", "2.14.0+cu132", "13.2", on(PlatformLinuxX86, "12.8", "12.0"), false, 0, 0, SupportNo, ""},
		{"2.11 cu128 dropped Volta", "2.11.0+cu128", "12.8", on(PlatformLinuxX86, "12.8", "7.0"), false, 1, 0, SupportYes, ""},
		{"2.10 cu128 still had Volta", "2.10.0+cu128", "12.8", on(PlatformLinuxX86, "12.8", "7.0"), true, 0, 0, SupportYes, ""},
		{"2.12 cu126 has no Blackwell", "2.12.0+cu126", "12.6", on(PlatformLinuxX86, "13.2", "12.0"), false, 1, 0, SupportYes, ""},
		{"2.15 cu132 has no Pascal", "2.15.0+cu132", "13.2", on(PlatformLinuxX86, "13.2", "6.1"), false, 1, 0, SupportYes, ""},
		{"GB10 runs sm_120 code", "2.14.0+cu130", "13.0", on(PlatformLinuxARM, "13.0", "12.1"), true, 0, 0, SupportYes, ""},
		{"Thor on aarch64 cu130", "2.14.0+cu130", "13.0", on(PlatformLinuxARM, "13.0", "11.0"), true, 0, 0, SupportYes, ""},
		{"aarch64 cu126 has no Turing", "2.14.0+cu126", "12.6", on(PlatformLinuxARM, "12.6", "7.5"), false, 1, 0, SupportYes, ""},
		{"a future GPU through PTX on Linux", "2.14.0+cu132", "13.2", on(PlatformLinuxX86, "13.2", "13.0"), false, 0, 1, SupportYes, ""},
		{"no PTX on Windows", "2.14.0+cu132", "13.2", on(PlatformWindows, "13.2", "13.0"), false, 1, 0, SupportYes, ""},
		{"inferred: 2.16 cu132 on an RTX 5090", "2.16.0+cu132", "13.2", on(PlatformLinuxX86, "13.2", "12.0"), true, 0, 0, SupportYes, "2.15"},
		{"inferred: 2.16 cu132 on a GTX 1080 Ti", "2.16.0+cu132", "13.2", on(PlatformLinuxX86, "13.2", "6.1"), false, 1, 0, SupportYes, "2.15"},
		{"inferred: 2.16 cu126 by 2.14's list", "2.16.0+cu126", "12.6", on(PlatformLinuxX86, "12.6", "6.1"), true, 0, 0, SupportYes, "2.14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CheckBuild(tt.torch, tt.cuda, tt.m)
			if c.Clean() != tt.clean || len(c.Unsupported()) != tt.unsupported || len(c.PTXOnly()) != tt.ptx ||
				c.Driver.Support != tt.driver || c.InferredFrom != tt.inferred || c.ReleaseKnown != (tt.inferred == "") || c.Unchecked != "" {
				t.Errorf("CheckBuild(%s) = %+v (clean %v; problems %q)", tt.torch, c, c.Clean(), c.Problems())
			}
			if tt.inferred != "" && (!strings.Contains(c.Inferred, "(inferred)") || !strings.Contains(c.GPUs[0].Reason, "inferred from torch "+tt.inferred)) {
				t.Errorf("an inferred verdict does not say so: %q, %q", c.Inferred, c.GPUs[0].Reason)
			}
		})
	}
}

// Issue 29 point 6: repair advice chooses by compute capability, going
// back to an older release when no newer one has code for a GPU.
func TestChooseRepairByArchitecture(t *testing.T) {
	tests := []struct {
		name, torch  string
		m            Machine
		torchTo, tag string
		downgrade    bool
		reason       []string
	}{
		{"GTX 1080 Ti on 2.15", "2.15.0", machine("13.2", "6.1"), "2.14.0", "cu126", true,
			[]string{"torch 2.14.0 + cu126 is the last release with code for sm_61", "torch 2.15.0 → 2.14.0", "torchvision 0.29.0", "CUDA 12.6"}},
		{"GTX 1080 Ti on a 2.16 the table lacks", "2.16.0", machine("13.2", "6.1"), "2.14.0", "cu126", true,
			[]string{"last release with code for sm_61"}},
		{"V100 on 2.11", "2.11.0", machine("12.8", "7.0"), "2.11.0", "cu126", false, []string{"cu126 is the newest CUDA variant of torch 2.11.0"}},
		{"RTX 5090 on 2.15 stays", "2.15.0", machine("13.2", "12.0"), "2.15.0", "cu132", false, nil},
		// The driver, not the GPU, keeps 2.15 from running: no downgrade.
		{"an old driver is no reason to go back", "2.15.0", machine("12.8", "8.6"), "2.15.0", "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := ChooseRepair(tt.torch, tt.m)
			if tt.tag == "" {
				if ok && r.Downgrade {
					t.Errorf("ChooseRepair = %+v, want no downgrade", r)
				}
				return
			}
			if !ok || r.Torch != tt.torchTo || r.Tag != tt.tag || r.Downgrade != tt.downgrade || !r.Check.Clean() {
				t.Fatalf("ChooseRepair = %+v, %v", r, ok)
			}
			for _, want := range tt.reason {
				if !strings.Contains(r.Reason, want) {
					t.Errorf("reason %q lacks %q", r.Reason, want)
				}
			}
		})
	}
}

func TestDriverFloorsOf13x(t *testing.T) {
	for cuda, full := range map[string]string{"13.1": "590.44.01", "13.2": "595.45.04", "13.3": "610.43.02"} {
		f, ok := DriverFloorFor(cuda, "linux")
		if !ok || f.Full != full || f.MinorCompat != "580" {
			t.Errorf("%s on Linux: %+v, %v", cuda, f, ok)
		}
		if w, ok := DriverFloorFor(cuda, "windows"); !ok || !w.NoOwnFloor || !w.Unverified || w.Full != "580" {
			t.Errorf("%s on Windows: %+v, %v (NVIDIA's table says N/A: the R580 branch)", cuda, w, ok)
		}
	}
	if f, _ := DriverFloorFor("13.3", "linux"); !f.Unverified {
		t.Error("13.3's floor comes from a secondary source, but is not marked unverified")
	}
	for _, tt := range []struct{ driver, platform, want string }{
		{"595.45.04", "linux", "13.2"}, {"595.44", "linux", "13.1"}, {"620.10", "linux", "13.3"},
		// Windows drivers of 13.x have no floor of their own: a driver
		// shows 13.0 at least, no more.
		{"600.10", "windows", "13.0"},
	} {
		if got, err := CUDAForDriver(tt.driver, tt.platform); err != nil || got != tt.want {
			t.Errorf("CUDAForDriver(%s, %s) = %q, %v, want %s", tt.driver, tt.platform, got, err, tt.want)
		}
	}
}

func TestAsOfAndNewest(t *testing.T) {
	s := Snap()
	if s.AsOf != "2026-11-26" || s.Newest.Minor != "2.15" || s.Newest.PyPILinuxCUDA != "13.2" {
		t.Errorf("snapshot: as of %q, newest %+v", s.AsOf, s.Newest)
	}
	var tags []string
	for _, v := range s.Newest.Variants {
		tags = append(tags, v.Tag)
		if _, ok := v.Arches[PlatformWindows]; !ok || len(v.Arches[PlatformWindows].PTX) != 0 {
			t.Errorf("%s: Windows arch list %+v (no PTX on Windows)", v.Tag, v.Arches[PlatformWindows])
		}
	}
	if strings.Join(tags, " ") != "cu130 cu132" {
		t.Errorf("2.15's variants %v, want cu130 cu132 (no CUDA 12)", tags)
	}
}

// torchaudio's last release is 2.11: no torchaudio is pinned beside a
// newer torch.
func TestCompanionsAfterTorchaudio(t *testing.T) {
	for v, want := range map[string][2]string{"2.11.0": {"0.26.0", "2.11.0"}, "2.12.1": {"0.27.1", ""}, "2.14.0": {"0.29.0", ""}, "2.15.0": {"0.30.0", ""}} {
		vision, audio, ok := Companions(v)
		if !ok || vision != want[0] || audio != want[1] {
			t.Errorf("Companions(%s) = %s, %s, %v; want %v", v, vision, audio, ok, want)
		}
	}
}
