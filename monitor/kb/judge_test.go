package kb

import (
	"strings"
	"testing"
)

func TestCheckBuild(t *testing.T) {
	a100and5090 := machine("12.8", "8.0", "12.0")
	tests := []struct {
		name, torch, cuda string
		m                 Machine
		clean             bool
		unsupported       int
		ptx               int
		driver            Support
		releaseKnown      bool
		unchecked         string
	}{
		{"cu124 on an A100", "2.5.1+cu124", "12.4", machine("12.4", "8.0"), true, 0, 0, SupportYes, true, ""},
		// Issue 16: cu124 over cu124 on an A100 and an RTX 5090 is not clean.
		{"cu124 on an A100 and an RTX 5090", "2.5.1+cu124", "12.4", a100and5090, false, 1, 0, SupportYes, true, ""},
		{"cu128 of 2.7 on both", "2.7.1+cu128", "12.8", a100and5090, true, 0, 0, SupportYes, true, ""},
		// Issue 14: torch 1.13.1+cu117 on an RTX 5090.
		{"1.13 on an RTX 5090", "1.13.1+cu117", "11.7", machine("12.8", "12.0"), false, 1, 0, SupportYes, true, ""},
		{"1.4 on an A100 only through PTX", "1.4.0", "10.1", machine("12.4", "8.0"), false, 0, 1, SupportYes, true, ""},
		{"driver too old", "2.9.1+cu130", "13.0", machine("12.8", "8.0"), false, 0, 0, SupportNo, true, ""},
		{"minor-version compatibility is not clean", "2.5.1+cu124", "12.4", machine("12.2", "8.0"), false, 0, 0, SupportYes, true, ""},
		{"no driver CUDA is not held against it", "2.5.1+cu124", "12.4", machine("", "8.0"), true, 0, 0, SupportUnknown, true, ""},
		// Issue 29: a release newer than the table is judged by its tag's
		// newest arch list (Inferred), unless no release has its tag.
		{"release newer than the table", "2.16.0+cu130", "13.0", machine("13.0", "8.0"), true, 0, 0, SupportYes, false, ""},
		{"release and tag newer than the table", "2.16.0+cu140", "14.0", machine("14.0", "8.0"), false, 0, 0, SupportYes, false, "newer than GPU Canary's release table, which ends at 2.15, and no release the table has offers cu140"},
		{"release older than the table", "0.4.1", "9.0", machine("12.8", "7.0"), false, 0, 0, SupportYes, false, "older than GPU Canary's release table"},
		{"a variant pytorch.org does not have", "2.5.1", "12.6", machine("12.8", "8.0"), false, 0, 0, SupportYes, true, "a conda, distribution or source build"},
		{"a source build", "2.5.0a0+git32f585d", "12.4", machine("12.8", "12.0"), false, 0, 0, SupportYes, true, "a pre-release or source build"},
		{"NVIDIA's container build", "2.6.0a0+ecf3bae40a.nv25.01", "12.8", machine("12.8", "12.0"), false, 0, 0, SupportYes, true, "pre-release or source build"},
		{"a local build label", "2.5.1+mybuild", "12.4", machine("12.8", "8.0"), false, 0, 0, SupportYes, true, `local version "mybuild"`},
		{"a nightly is judged by its release", "2.10.0.dev20251001+cu128", "12.8", machine("12.8", "12.0"), true, 0, 0, SupportYes, true, ""},
		{"no GPU with a known compute capability", "2.5.1+cu124", "12.4", Machine{DriverCUDA: "12.4", GPUs: []GPU{{Name: "x", Asleep: true}}}, true, 0, 0, SupportYes, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CheckBuild(tt.torch, tt.cuda, tt.m)
			if c.Clean() != tt.clean || len(c.Unsupported()) != tt.unsupported || len(c.PTXOnly()) != tt.ptx ||
				c.Driver.Support != tt.driver || c.ReleaseKnown != tt.releaseKnown || !strings.Contains(c.Unchecked, tt.unchecked) ||
				(tt.unchecked == "") != (c.Unchecked == "") {
				t.Errorf("CheckBuild(%s, %s) = %+v (clean %v; problems %q)", tt.torch, tt.cuda, c, c.Clean(), c.Problems())
			}
			if !c.Clean() && c.Problems() == "" {
				t.Error("not clean, with no problem said")
			}
		})
	}
}
