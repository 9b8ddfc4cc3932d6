package kb

import (
	"slices"
	"strings"
	"testing"
)

// machine is a driver's CUDA version and GPUs by compute capability.
func machine(driver string, ccs ...string) Machine {
	m := Machine{DriverCUDA: driver, wheel: PlatformLinuxX86}
	for _, cc := range ccs {
		m.GPUs = append(m.GPUs, GPU{Name: "GPU " + cc, CC: cc})
	}
	return m
}

func TestChooseVariant(t *testing.T) {
	tests := []struct {
		name, torch string
		m           Machine
		want        Choice // Reason: a part the reason must contain
		ok          bool
	}{
		{"A100 on driver 12.4", "2.5.1", machine("12.4", "8.0"),
			Choice{Torch: "2.5.1", Tag: "cu124", CUDA: "12.4", Vision: "0.20.1", Audio: "2.5.1", Reason: "every GPU on this machine counts"}, true},
		{"installed with a local tag", "2.5.1+cpu", machine("12.4", "8.0"),
			Choice{Torch: "2.5.1", Tag: "cu124", CUDA: "12.4", Vision: "0.20.1", Audio: "2.5.1"}, true},
		{"driver 12.2 excludes cu124", "2.5.1", machine("12.2", "8.0"),
			Choice{Torch: "2.5.1", Tag: "cu121", CUDA: "12.1", Vision: "0.20.1", Audio: "2.5.1", Reason: "cu124 runs on this driver only through minor-version compatibility"}, true},
		{"driver 11.8", "2.5.1", machine("11.8", "8.0"), Choice{Torch: "2.5.1", Tag: "cu118", CUDA: "11.8", Vision: "0.20.1", Audio: "2.5.1"}, true},
		{"driver 13.0 takes the newest", "2.9.1", machine("13.0", "8.6"), Choice{Torch: "2.9.1", Tag: "cu130", CUDA: "13.0", Vision: "0.24.1", Audio: "2.9.1"}, true},
		{"no GPU to check", "2.9.1", machine("12.9"), Choice{Torch: "2.9.1", Tag: "cu128", CUDA: "12.8", Vision: "0.24.1", Audio: "2.9.1"}, true},
		{"Blackwell on 2.7 driver 12.8", "2.7.1", machine("12.8", "12.0"),
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1", Reason: "not verified"}, true},
		{"Maxwell excluded from cu130", "2.9.1", machine("13.0", "5.0"),
			Choice{Torch: "2.9.1", Tag: "cu126", CUDA: "12.6", Vision: "0.24.1", Audio: "2.9.1", Reason: "cu130 has no code for GPU 5.0 (sm_50)"}, true},
		{"2.0 is judged by its own arch lists", "2.0.1", machine("12.4", "8.0"),
			Choice{Torch: "2.0.1", Tag: "cu118", CUDA: "11.8", Vision: "0.15.2", Audio: "2.0.2"}, true},
		{"unknown driver allowed and said", "2.5.1", machine("", "8.0"),
			Choice{Torch: "2.5.1", Tag: "cu124", CUDA: "12.4", Vision: "0.20.1", Audio: "2.5.1", Reason: "not known, so it was not checked"}, true},
		{"1.9 on an A100 moves to cu111", "1.9.0+cu102", machine("12.4", "8.0"),
			Choice{Torch: "1.9.0", Tag: "cu111", CUDA: "11.1", Vision: "0.10.0", Audio: "0.9.0", Reason: "cu111 is the newest CUDA variant of torch 1.9.0"}, true},
		{"an unverified tag is not chosen", "1.11.0", machine("12.4", "8.6"),
			Choice{Torch: "1.11.0", Tag: "cu113", CUDA: "11.3", Vision: "0.12.0", Audio: "0.11.0", Reason: "that cu115 exists is not verified"}, true},
		// A future 13.0 GPU: cu129 has only PTX for it, which a rule warns
		// about, so no variant of 2.8 clears it.
		{"PTX only is not clean", "2.8.0", machine("12.9", "13.0"), Choice{Reason: "cu129 reaches GPU 13.0 (sm_130) only through PTX"}, false},
		{"Blackwell on 2.5", "2.5.1", machine("12.8", "12.0"), Choice{Reason: "cu124 has no code for GPU 12.0 (sm_120)"}, false},
		// The machine: an A100 and an RTX 5090. cu124 runs on the
		// A100 but not the 5090, so it is not proposed.
		{"A100 and RTX 5090 on 2.5", "2.5.1", machine("12.8", "8.0", "12.0"), Choice{Reason: "cu124 has no code for GPU 12.0 (sm_120)"}, false},
		{"driver too old for any", "2.9.1", machine("12.4", "8.0"), Choice{Reason: "cu126 runs on this driver only through minor-version compatibility"}, false},
		{"torch newer than the table", "2.16.0", machine("13.0", "8.0"), Choice{Reason: "not in GPU Canary's release table"}, false},
		{"judged only", "1.7.1", machine("11.0", "8.0"), Choice{Reason: "GPU Canary does not install torch 1.7"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ChooseVariant(tt.torch, tt.m)
			if ok != tt.ok || !strings.Contains(got.Reason, tt.want.Reason) || got.Reason == "" {
				t.Fatalf("ChooseVariant(%s, %+v) = %+v, %v", tt.torch, tt.m, got, ok)
			}
			reason := got.Reason
			got.Reason, tt.want.Reason = "", ""
			if got != tt.want {
				t.Errorf("choice = %+v, want %+v (reason %q)", got, tt.want, reason)
			}
			if ok {
				if vs, _ := variants(tt.torch); !slices.Contains(vs, got.Tag) {
					t.Errorf("chose %s, not a variant of %s", got.Tag, tt.torch)
				}
			}
		})
	}
}

func TestNextReleaseFor(t *testing.T) {
	tests := []struct {
		name, torch string
		m           Machine
		want        Choice
		ok          bool
	}{
		{"Blackwell with a 12.8 driver", "2.5.1", machine("12.8", "12.0"),
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		{"Blackwell with a 13.0 driver", "2.5.1+cu124", machine("13.0", "12.0"),
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		// torch 1.13 (issue 14): the 5090 needs 2.7, never a 1.x build
		// that reaches it only through PTX.
		{"1.13 on an RTX 5090", "1.13.1+cu117", machine("12.8", "12.0"),
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		{"A100 and RTX 5090", "2.5.1", machine("12.8", "8.0", "12.0"),
			Choice{Torch: "2.7.1", Tag: "cu128", CUDA: "12.8", Vision: "0.22.1", Audio: "2.7.1"}, true},
		// 2.7 cu128 has no sm_70: a V100 beside a 5090 needs 2.8.
		{"V100 and RTX 5090", "2.5.1", machine("12.8", "7.0", "12.0"),
			Choice{Torch: "2.8.0", Tag: "cu128", CUDA: "12.8", Vision: "0.23.0", Audio: "2.8.0"}, true},
		{"old judged-only release moves to one GPU Canary installs", "1.4.0", machine("12.4", "8.0"),
			Choice{Torch: "1.9.1", Tag: "cu111", CUDA: "11.1", Vision: "0.10.1", Audio: "0.9.1"}, true},
		{"Blackwell with a 12.4 driver", "2.5.1", machine("12.4", "12.0"), Choice{}, false},
		{"a Kepler beside a Blackwell: no release has both", "2.5.1", machine("12.8", "3.7", "12.0"), Choice{}, false},
		{"Thor: no release", "2.5.1", machine("13.0", "11.0"), Choice{}, false},
		{"never older than installed", "2.9.1", machine("12.4", "8.0"), Choice{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NextReleaseFor(tt.torch, tt.m)
			if ok != tt.ok || got.Reason == "" {
				t.Fatalf("NextReleaseFor(%s, %+v) = %+v, %v", tt.torch, tt.m, got, ok)
			}
			got.Reason = ""
			if got != tt.want {
				t.Errorf("NextReleaseFor = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzChooseVariant: whatever is asked, a choice is a variant of the
// release and is clean on the machine by CheckBuild, the rules' own test.
func FuzzChooseVariant(f *testing.F) {
	f.Add("2.5.1", "12.4", "8.0", "12.0")
	f.Add("2.10.0.dev20251001+cu128", "13.0", "12.0", "")
	f.Add("2.5.0a0+git32f585d", "", "", "")
	f.Add("1!2.0", "", "x.y", "7.0")
	f.Add("2.9.1", "12.10", "12.1.1", "3.7")
	f.Fuzz(func(t *testing.T, torch, driver, cc1, cc2 string) {
		m := machine(driver, cc1, cc2)
		for _, pick := range []func(string, Machine) (Choice, bool){ChooseVariant, NextReleaseFor} {
			c, ok := pick(torch, m)
			if c.Reason == "" {
				t.Fatal("no reason")
			}
			if !ok {
				continue
			}
			vs, _ := variants(c.Torch)
			if !slices.Contains(vs, c.Tag) {
				t.Fatalf("chose %q, not among %v", c.Tag, vs)
			}
			if b := CheckBuild(c.Torch+"+"+c.Tag, c.CUDA, m); !b.Clean() {
				t.Fatalf("chose %s+%s, which is not clean on %+v: %s", c.Torch, c.Tag, m, b.Problems())
			}
		}
	})
}

func BenchmarkChooseVariant(b *testing.B) {
	facts()
	m := machine("12.4", "8.0", "12.0")
	for b.Loop() {
		ChooseVariant("2.5.1", m)
	}
}

func TestChooseRepair(t *testing.T) {
	tests := []struct {
		name, torch string
		m           Machine
		tag, target string
		upgrade     bool
		clean       bool
		ok          bool
	}{
		{"a clean variant of the release", "2.5.1+cpu", machine("12.4", "8.0"), "cu124", "2.5.1", false, true, true},
		{"an upgrade when only a newer release is clean", "2.5.1+cu124", machine("12.8", "8.0", "12.0"), "cu128", "2.7.1", true, true, true},
		// Nothing runs on a CUDA 12.4 driver in full from 2.9 on: the
		// variant closest to the driver, through minor-version compatibility.
		{"minor-version compatibility when nothing runs in full", "2.9.1+cpu", machine("12.4", "8.0"), "cu126", "2.9.1", false, false, true},
		// A future 13.0 GPU: 2.8's cu129 reaches it through PTX, with a
		// driver that supports it in full, before cu128 (no PTX at all).
		{"PTX only when nothing has machine code", "2.8.0+cpu", machine("12.9", "13.0"), "cu129", "2.8.0", false, false, true},
		{"nothing runs", "2.5.1+cpu", machine("12.8", "3.7", "12.0"), "", "", false, false, false},
		{"a CUDA 11 driver for 2.9", "2.9.1+cpu", machine("11.8", "8.0"), "", "", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := ChooseRepair(tt.torch, tt.m)
			if ok != tt.ok || r.Reason == "" {
				t.Fatalf("ChooseRepair = %+v, %v", r, ok)
			}
			if !ok {
				return
			}
			if r.Tag != tt.tag || r.Torch != tt.target || r.Upgrade != tt.upgrade || r.Check.Clean() != tt.clean {
				t.Errorf("ChooseRepair = %s+%s upgrade %v clean %v (%s)", r.Torch, r.Tag, r.Upgrade, r.Check.Clean(), r.Reason)
			}
			if r.Check.Unchecked != "" || r.Check.Driver.Support == SupportNo || len(r.Check.Unsupported()) > 0 {
				t.Errorf("a repair that does not run: %s", r.Check.Problems())
			}
		})
	}
}
