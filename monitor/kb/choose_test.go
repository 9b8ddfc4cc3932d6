package kb

import (
	"slices"
	"strings"
	"testing"
)

func TestChooseVariant(t *testing.T) {
	tests := []struct {
		name, torch, driver, cc string
		want                    Choice // Reason: a part the reason must contain
		ok                      bool
	}{
		{"A100 on driver 12.4", "2.5.1", "12.4", "8.0",
			Choice{Torch: "2.5.1", Tag: "cu124", CUDA: "12.4", Vision: "0.20.1", Audio: "2.5.1", Reason: "newest CUDA variant"}, true},
		{"installed with a local tag", "2.5.1+cpu", "12.4", "8.0",
			Choice{Torch: "2.5.1", Tag: "cu124", CUDA: "12.4", Vision: "0.20.1", Audio: "2.5.1"}, true},
		{"driver 12.2 excludes cu124", "2.5.1", "12.2", "8.0",
			Choice{Torch: "2.5.1", Tag: "cu121", CUDA: "12.1", Vision: "0.20.1", Audio: "2.5.1", Reason: "cu124 needs a driver with CUDA 12.4; this driver supports 12.2"}, true},
		{"driver 11.8", "2.5.1", "11.8", "8.0", Choice{Torch: "2.5.1", Tag: "cu118", CUDA: "11.8", Vision: "0.20.1", Audio: "2.5.1"}, true},
		{"driver 13.0 takes the newest", "2.9.1", "13.0", "8.6", Choice{Torch: "2.9.1", Tag: "cu130", CUDA: "13.0", Vision: "0.24.1", Audio: "2.9.1"}, true},
		{"no GPU to check", "2.9.1", "12.9", "", Choice{Torch: "2.9.1", Tag: "cu128", CUDA: "12.8", Vision: "0.24.1", Audio: "2.9.1"}, true},
		{"Blackwell on 2.7 driver 12.8", "2.7.1", "12.8", "12.0", Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		{"Maxwell excluded from cu130", "2.9.1", "13.0", "5.0",
			Choice{Torch: "2.9.1", Tag: "cu126", CUDA: "12.6", Vision: "0.24.1", Audio: "2.9.1", Reason: "cu130 has no code for sm_50"}, true},
		{"unknown arch list allowed and said", "2.0.1", "12.4", "8.0",
			Choice{Torch: "2.0.1", Tag: "cu118", CUDA: "11.8", Vision: "0.15.2", Audio: "2.0.2", Reason: "not in the table, so sm_80 was not checked"}, true},
		{"unknown driver allowed and said", "2.5.1", "", "8.0",
			Choice{Torch: "2.5.1", Tag: "cu124", CUDA: "12.4", Vision: "0.20.1", Audio: "2.5.1", Reason: "not known, so it was not checked"}, true},
		{"via PTX said", "2.8.0", "12.9", "13.0",
			Choice{Torch: "2.8.0", Tag: "cu129", CUDA: "12.9", Vision: "0.23.0", Audio: "2.8.0", Reason: "only through PTX"}, true},
		{"Blackwell on 2.5", "2.5.1", "12.8", "12.0", Choice{Reason: "cu124 has no code for sm_120"}, false},
		{"driver too old for any", "2.9.1", "12.4", "8.0", Choice{Reason: "cu126 needs a driver with CUDA 12.6; this driver supports 12.4"}, false},
		{"torch newer than the table", "2.12.0", "13.0", "8.0", Choice{Reason: "not in GPU Canary's release table"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ChooseVariant(tt.torch, tt.driver, tt.cc)
			if ok != tt.ok || !strings.Contains(got.Reason, tt.want.Reason) || got.Reason == "" {
				t.Fatalf("ChooseVariant(%s, %s, %s) = %+v, %v", tt.torch, tt.driver, tt.cc, got, ok)
			}
			reason := got.Reason
			got.Reason, tt.want.Reason = "", ""
			if got != tt.want {
				t.Errorf("choice = %+v, want %+v (reason %q)", got, tt.want, reason)
			}
			if ok {
				if vs, _ := Variants(tt.torch); !slices.Contains(vs, got.Tag) {
					t.Errorf("chose %s, not a variant of %s", got.Tag, tt.torch)
				}
			}
		})
	}
}

func TestOldestReleaseFor(t *testing.T) {
	tests := []struct {
		name, driver, cc string
		want             Choice
		ok               bool
	}{
		{"Blackwell with a 12.8 driver", "12.8", "12.0",
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		{"Blackwell with a 13.0 driver", "13.0", "12.0",
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		{"A100 with a 12.4 driver", "12.4", "8.0",
			Choice{Torch: "2.1.2", Tag: "cu121", CUDA: "12.1", Vision: "0.16.2", Audio: "2.1.2"}, true},
		{"no GPU, CUDA 11.7 driver", "11.7", "",
			Choice{Torch: "1.13.1", Tag: "cu117", CUDA: "11.7", Vision: "0.14.1", Audio: "0.13.1"}, true},
		{"Blackwell with a 12.4 driver", "12.4", "12.0", Choice{}, false},
		{"Thor: no release", "13.0", "11.0", Choice{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := OldestReleaseFor(tt.driver, tt.cc)
			if ok != tt.ok || got.Reason == "" {
				t.Fatalf("OldestReleaseFor(%s, %s) = %+v, %v", tt.driver, tt.cc, got, ok)
			}
			got.Reason = ""
			if got != tt.want {
				t.Errorf("OldestReleaseFor(%s, %s) = %+v, want %+v", tt.driver, tt.cc, got, tt.want)
			}
		})
	}
}

func FuzzChooseVariant(f *testing.F) {
	f.Add("2.5.1", "12.4", "8.0")
	f.Add("2.10.0.dev20251001+cu128", "13.0", "12.0")
	f.Add("2.5.0a0+git32f585d", "", "")
	f.Add("1!2.0", "", "x.y")
	f.Add("2.9.1", "12.10", "12.1.1")
	f.Fuzz(func(t *testing.T, torch, driver, cc string) {
		c, ok := ChooseVariant(torch, driver, cc)
		if c.Reason == "" {
			t.Fatal("no reason")
		}
		if !ok {
			return
		}
		vs, _ := Variants(torch)
		if !slices.Contains(vs, c.Tag) {
			t.Fatalf("chose %q, not among %v", c.Tag, vs)
		}
		if v := BuildRunsOnGPU(torch, c.Tag, cc); cc != "" && v.Support == SupportNo {
			t.Fatalf("chose %s, which has no code for %q: %s", c.Tag, cc, v.Reason)
		}
		if v := DriverRuns(c.CUDA, driver); v.Support == SupportNo || v.MinorCompat {
			t.Fatalf("chose CUDA %s for a driver with %q: %s", c.CUDA, driver, v.Reason)
		}
	})
}

func BenchmarkChooseVariant(b *testing.B) {
	facts()
	for b.Loop() {
		ChooseVariant("2.5.1", "12.4", "8.0")
	}
}
