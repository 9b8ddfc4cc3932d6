package kb

import (
	"slices"
	"strings"
	"testing"
)

func TestEmbeddedData(t *testing.T) {
	d := data()
	if len(d.Releases) == 0 || len(d.Drivers) == 0 || len(d.Architectures) == 0 {
		t.Fatal("empty tables")
	}
	for _, r := range d.Releases {
		if r.Source == "" || len(r.Patches) == 0 || len(r.CUDA) == 0 {
			t.Errorf("release %s: missing source, patches or variants", r.Minor)
		}
		for tag := range r.Arches {
			if !slices.Contains(r.CUDA, tag) {
				t.Errorf("release %s: arch list for %s, which it does not offer", r.Minor, tag)
			}
		}
		for _, tag := range r.CUDA {
			if _, ok := CUDAForTag(tag); !ok {
				t.Errorf("release %s: bad tag %q", r.Minor, tag)
			}
		}
	}
	for _, d := range d.Drivers {
		if d.Source == "" || d.LinuxFull == "" || d.LinuxMinor == "" {
			t.Errorf("driver row %s incomplete", d.CUDA)
		}
	}
	for _, a := range d.Architectures {
		if a.Source == "" || len(a.CCs) == 0 {
			t.Errorf("architecture %s incomplete", a.Name)
		}
	}
}

func TestTags(t *testing.T) {
	for cuda, tag := range map[string]string{"12.1": "cu121", "11.8": "cu118", "13.0": "cu130", "12.4.1": "cu124", "": "", "x": ""} {
		if got := TagForCUDA(cuda); got != tag {
			t.Errorf("TagForCUDA(%q) = %q, want %q", cuda, got, tag)
		}
	}
	for tag, cuda := range map[string]string{"cu121": "12.1", "cu130": "13.0", "cpu": "", "rocm6.2": "", "cuxyz": ""} {
		got, ok := CUDAForTag(tag)
		if got != cuda || ok != (cuda != "") {
			t.Errorf("CUDAForTag(%q) = %q, %v", tag, got, ok)
		}
	}
	if got := CUDAFromDriverVersion(12090); got != "12.9" {
		t.Errorf("CUDAFromDriverVersion(12090) = %q", got)
	}
	if got := CUDAFromDriverVersion(13000); got != "13.0" {
		t.Errorf("CUDAFromDriverVersion(13000) = %q", got)
	}
}

func TestReleases(t *testing.T) {
	tests := []struct {
		torch, vision, audio string
		variants             []string
		linux                string
	}{
		{"2.5.1", "0.20.1", "2.5.1", []string{"cu118", "cu121", "cu124"}, "12.4"},
		{"2.5.1+cu121", "0.20.1", "2.5.1", []string{"cu118", "cu121", "cu124"}, "12.4"},
		{"2.0.1", "0.15.2", "2.0.2", []string{"cu117", "cu118"}, "11.7"},
		{"1.13.1", "0.14.1", "0.13.1", []string{"cu116", "cu117"}, "11.7"},
		{"2.7.1", "0.22.1", "2.7.1", []string{"cu118", "cu126", "cu128"}, "12.6"},
		{"2.10.0.dev20251001+cu128", "0.25.0", "2.10.0", []string{"cu126", "cu128", "cu130"}, "12.8"},
		{"2.11.0", "0.26.0", "2.11.0", []string{"cu126", "cu128", "cu130"}, "13.0"},
	}
	for _, tt := range tests {
		t.Run(tt.torch, func(t *testing.T) {
			v, a, ok := Companions(tt.torch)
			if !ok || v != tt.vision || a != tt.audio {
				t.Errorf("Companions = %q, %q, %v", v, a, ok)
			}
			vs, ok := Variants(tt.torch)
			if !ok || !slices.Equal(vs, tt.variants) {
				t.Errorf("Variants = %v", vs)
			}
			if c, ok := DefaultCUDA(tt.torch, "linux"); !ok || c != tt.linux {
				t.Errorf("DefaultCUDA linux = %q", c)
			}
			if c, ok := DefaultCUDA(tt.torch, "windows"); !ok || c != "" {
				t.Errorf("DefaultCUDA windows = %q", c)
			}
		})
	}
	for _, v := range []string{"9.9.0", "3.0.0", "garbage", ""} {
		if Known(v) {
			t.Errorf("Known(%q)", v)
		}
		if _, _, ok := Companions(v); ok {
			t.Errorf("Companions(%q) ok", v)
		}
		if _, ok := DefaultCUDA(v, "linux"); ok {
			t.Errorf("DefaultCUDA(%q) ok", v)
		}
	}
}

func TestDriverRuns(t *testing.T) {
	tests := []struct {
		build, driver string
		want          Support
		minorCompat   bool
	}{
		{"12.1", "12.4", SupportYes, false},
		{"12.4", "12.4", SupportYes, false},
		{"12.8", "12.4", SupportYes, true},
		{"13.0", "12.8", SupportNo, false},
		{"12.1", "11.4", SupportNo, false},
		{"11.8", "12.4", SupportYes, false},
		{"12.1", "", SupportUnknown, false},
		{"", "12.4", SupportUnknown, false},
	}
	for _, tt := range tests {
		got := DriverRuns(tt.build, tt.driver)
		if got.Support != tt.want || got.MinorCompat != tt.minorCompat || got.Reason == "" {
			t.Errorf("DriverRuns(%q, %q) = %+v", tt.build, tt.driver, got)
		}
	}
	f, ok := DriverFloorFor("12.4", "linux")
	if !ok || f.MinorCompat != "525.60.13" || f.Full != "550.54.14" || f.Source == "" {
		t.Errorf("DriverFloorFor 12.4 linux = %+v", f)
	}
	if f, ok := DriverFloorFor("13.0", "linux"); !ok || f.MinorCompat != "580" || f.Full != "580.65.06" {
		t.Errorf("DriverFloorFor 13.0 = %+v", f)
	}
	if f, ok := DriverFloorFor("12.4", "windows"); !ok || f.Full != "551.61" {
		t.Errorf("DriverFloorFor 12.4 windows = %+v", f)
	}
}

func TestArchitecture(t *testing.T) {
	for cc, want := range map[string]string{"8.0": "Ampere", "8.6": "Ampere", "8.9": "Ada Lovelace", "9.0": "Hopper", "12.0": "Blackwell", "7.5": "Turing", "6.1": "Pascal"} {
		if got, ok := Architecture(cc); !ok || got != want {
			t.Errorf("Architecture(%q) = %q", cc, got)
		}
	}
	if _, ok := Architecture("42.0"); ok {
		t.Error("unknown compute capability named")
	}
}

func TestBuildRunsOnGPU(t *testing.T) {
	tests := []struct {
		torch, tag, cc string
		want           Support
		ptx            bool
	}{
		{"2.5.1", "cu121", "8.0", SupportYes, false},
		{"2.5.1", "cu121", "8.9", SupportYes, false}, // 8.6 SASS runs on 8.9
		{"2.5.1", "cu121", "12.0", SupportNo, false}, // Blackwell with torch 2.5
		{"2.8.0", "cu126", "12.0", SupportNo, false},
		{"2.8.0", "cu128", "12.0", SupportYes, false},
		{"2.8.0", "cu129", "12.1", SupportYes, false}, // 12.0 SASS runs on 12.1
		{"2.9.1", "cu130", "5.0", SupportNo, false},   // Maxwell dropped
		{"2.7.1", "cu128", "10.3", SupportYes, false},
		{"2.9.1", "cu130", "11.0", SupportNo, false},
		{"9.0.0", "cu130", "8.0", SupportUnknown, false}, // newer than the table
		{"2.0.1", "cu118", "8.0", SupportUnknown, false}, // no arch list known
	}
	for _, tt := range tests {
		got := BuildRunsOnGPU(tt.torch, tt.tag, tt.cc)
		if got.Support != tt.want || got.ViaPTX != tt.ptx || got.Reason == "" {
			t.Errorf("BuildRunsOnGPU(%s %s on %s) = %+v", tt.torch, tt.tag, tt.cc, got)
		}
	}
	// PTX: a build with only compute_120 PTX above sm_90 SASS runs on a
	// hypothetical 12.5 through the JIT.
	if got := BuildRunsOnGPU("2.9.1", "cu130", "12.5"); got.Support != SupportYes {
		t.Errorf("12.5 on cu130: %+v", got)
	}
	if got := BuildRunsOnGPU("2.8.0", "cu129", "13.0"); got.Support != SupportYes || !got.ViaPTX {
		t.Errorf("13.0 on cu129 (12.0 PTX): %+v", got)
	}
}

func TestChooseVariant(t *testing.T) {
	tests := []struct {
		torch, driver, cc string
		tag               string
		ok                bool
		reason            string
	}{
		{"2.5.1", "12.4", "8.0", "cu124", true, "newest CUDA variant"}, // the A100 on driver 550
		{"2.5.1", "12.2", "8.0", "cu121", true, "cu124 needs a driver with CUDA 12.4"},
		{"2.5.1", "11.8", "8.0", "cu118", true, ""},
		{"2.5.1", "12.8", "12.0", "", false, "no code for sm_120"}, // Blackwell with torch 2.5
		{"2.7.1", "12.8", "12.0", "cu128", true, ""},
		{"2.9.1", "13.0", "5.0", "cu126", true, "cu130 has no code for sm_50"},
		{"2.9.1", "12.9", "", "cu128", true, ""},
		{"9.9.0", "12.4", "8.0", "", false, "not in GPU Canary's release table"},
	}
	for _, tt := range tests {
		c, ok := ChooseVariant(tt.torch, tt.driver, tt.cc)
		if ok != tt.ok || c.Tag != tt.tag || !strings.Contains(c.Reason, tt.reason) {
			t.Errorf("ChooseVariant(%s, %s, %s) = %+v, %v", tt.torch, tt.driver, tt.cc, c, ok)
		}
		if ok {
			if vs, _ := Variants(tt.torch); !slices.Contains(vs, c.Tag) {
				t.Errorf("chose %s, not a variant of %s", c.Tag, tt.torch)
			}
		}
	}
	c, _ := ChooseVariant("2.5.1", "12.4", "8.0")
	if c.Torch != "2.5.1" || c.Vision != "0.20.1" || c.Audio != "2.5.1" || c.CUDA != "12.4" {
		t.Errorf("choice = %+v", c)
	}
}

func TestOldestReleaseFor(t *testing.T) {
	c, ok := OldestReleaseFor("12.8", "12.0")
	if !ok || c.Torch != "2.7.1" || c.Tag != "cu128" || c.Vision != "0.22.1" {
		t.Errorf("Blackwell on 12.8: %+v %v", c, ok)
	}
	c, ok = OldestReleaseFor("12.4", "8.0")
	if !ok || c.Torch != "2.1.2" {
		t.Errorf("A100 on 12.4: %+v %v", c, ok)
	}
	if _, ok := OldestReleaseFor("12.4", "12.0"); ok {
		t.Error("Blackwell on a 12.4 driver has no release")
	}
}

func FuzzChooseVariant(f *testing.F) {
	f.Add("2.5.1", "12.4", "8.0")
	f.Add("2.10.0.dev20251001+cu128", "13.0", "12.0")
	f.Add("1!2.0", "", "x.y")
	f.Fuzz(func(t *testing.T, torch, driver, cc string) {
		c, ok := ChooseVariant(torch, driver, cc)
		if !ok {
			return
		}
		vs, _ := Variants(torch)
		if !slices.Contains(vs, c.Tag) {
			t.Fatalf("chose %q, not among %v", c.Tag, vs)
		}
		_ = BuildRunsOnGPU(torch, c.Tag, cc)
		_ = DriverRuns(c.CUDA, driver)
	})
}

func BenchmarkChooseVariant(b *testing.B) {
	for b.Loop() {
		ChooseVariant("2.5.1", "12.4", "8.0")
	}
}
