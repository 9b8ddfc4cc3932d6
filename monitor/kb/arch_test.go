package kb

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestArchitecture(t *testing.T) {
	tests := map[string]string{
		"5.0": "Maxwell", "5.2": "Maxwell", "6.1": "Pascal", "7.0": "Volta", "7.5": "Turing",
		"8.0": "Ampere", "8.6": "Ampere", "8.7": "Ampere", "8.9": "Ada Lovelace", "9.0": "Hopper",
		"10.0": "Blackwell", "10.3": "Blackwell", "11.0": "Blackwell", "12.0": "Blackwell", "12.1": "Blackwell",
	}
	for cc, want := range tests {
		t.Run(cc, func(t *testing.T) {
			if got, ok := Architecture(cc); !ok || got != want {
				t.Errorf("Architecture(%q) = %q, %v; want %q", cc, got, ok, want)
			}
		})
	}
	for _, cc := range []string{"42.0", "8.5", "", "sm_86"} {
		if got, ok := Architecture(cc); ok {
			t.Errorf("Architecture(%q) = %q for an unknown compute capability", cc, got)
		}
	}
}

func TestArchListFor(t *testing.T) {
	a, ok := archListFor("2.9.1+cu130", "cu130")
	if !ok || !slices.Equal(a.SASS, []string{"7.5", "8.0", "8.6", "9.0", "10.0", "12.0"}) || !slices.Equal(a.PTX, []string{"12.0"}) || a.Source == "" {
		t.Errorf("2.9 cu130 = %+v, %v", a, ok)
	}
	for _, q := range [][2]string{{"1.13.1", "cu118"}, {"0.4.1", "cu90"}, {"2.5.1", "cpu"}, {"2.5.1", "cu128"}, {"2.16.0", "cu130"}, {"x", "cu121"}} {
		if a, ok := archListFor(q[0], q[1]); ok {
			t.Errorf("archListFor(%s, %s) = %+v for a build the table does not know", q[0], q[1], a)
		}
	}
}

func TestBuildRunsOnGPU(t *testing.T) {
	tests := []struct {
		name, torch, tag, cc string
		want                 Support
		ptx                  bool
		reason               string
	}{
		{"A100 on 2.5 cu124", "2.5.1", "cu124", "8.0", SupportYes, false, "sm_80 code"},
		{"8.9 runs 8.6 SASS", "2.5.1", "cu121", "8.9", SupportYes, false, "sm_86 code, which runs on sm_89"},
		{"Blackwell on 2.5", "2.5.1", "cu121", "12.0", SupportNo, false, "none of which runs on sm_120"},
		{"Blackwell on 2.8 cu126", "2.8.0", "cu126", "12.0", SupportNo, false, ""},
		{"Blackwell on 2.8 cu128", "2.8.0", "cu128", "12.0", SupportYes, false, ""},
		{"Blackwell on 2.7 cu128", "2.7.1", "cu128", "12.0", SupportYes, false, "not verified"},
		// GB10 (12.1) runs the 12.0 SASS of cu130 by the same-major rule,
		// before PTX is needed.
		{"GB10 on 2.9 cu130", "2.9.1", "cu130", "12.1", SupportYes, false, "sm_120 code"},
		{"GB10 on 2.9 cu128", "2.9.1", "cu128", "12.1", SupportYes, false, ""},
		{"a future 13.0 GPU on 2.9 cu130 via PTX", "2.9.1", "cu130", "13.0", SupportYes, true, "compute_120 PTX"},
		{"a future 13.0 GPU on 2.8 cu129 via PTX", "2.8.0", "cu129", "13.0", SupportYes, true, ""},
		{"a future 13.0 GPU on 2.8 cu128 without PTX", "2.8.0", "cu128", "13.0", SupportNo, false, ""},
		{"Thor on 2.9 cu130", "2.9.1", "cu130", "11.0", SupportNo, false, ""},
		{"B300 runs 10.0 SASS", "2.7.1", "cu128", "10.3", SupportYes, false, ""},
		{"Xavier 7.2 cannot run 7.5 SASS", "2.9.1", "cu130", "7.2", SupportNo, false, "none of which runs on sm_72"},
		{"Pascal dropped in 2.8 cu128", "2.8.0", "cu128", "6.1", SupportNo, false, ""},
		{"Maxwell dropped in cu130", "2.9.1", "cu130", "5.0", SupportNo, false, ""},
		{"Maxwell on 2.9 cu126", "2.9.1", "cu126", "5.2", SupportYes, false, ""},
		{"Kepler on cu118", "2.1.0", "cu118", "3.7", SupportYes, false, ""},
		{"Kepler on cu121", "2.1.0", "cu121", "3.7", SupportNo, false, ""},
		{"torch newer than the table", "2.16.0", "cu130", "8.0", SupportUnknown, false, "not in GPU Canary's table"},
		{"no arch list known", "2.5.1", "cu126", "8.0", SupportUnknown, false, ""},
		// Issue 14: torch 1.x is checked too. 1.13 has no PTX, so an RTX
		// 5090 has nothing to run.
		{"1.13 cu117 on an RTX 5090", "1.13.1+cu117", "cu117", "12.0", SupportNo, false, "none of which runs on sm_120"},
		{"1.13 cu117 on an A100", "1.13.1+cu117", "cu117", "8.0", SupportYes, false, "sm_80 code"},
		{"1.7 cu110 on an RTX 3090 runs sm_80 code", "1.7.1", "cu110", "8.6", SupportYes, false, "sm_80 code, which runs on sm_86"},
		{"1.6 cu102 on an RTX 3090", "1.6.0", "cu102", "8.6", SupportNo, false, "not verified"},
		{"1.4 cu101 reaches an A100 only through PTX", "1.4.0", "cu101", "8.0", SupportYes, true, "compute_37 PTX"},
		{"1.0 cu100 reaches Ampere only through PTX", "1.0.1", "cu100", "8.6", SupportYes, true, "compute_50 PTX"},
		{"1.0 cu90 runs a K80 with sm_35 code", "1.0.0", "cu90", "3.7", SupportYes, false, "sm_35 code, which runs on sm_37"},
		{"1.8 cu102 dropped sm_75 but a T4 runs sm_70", "1.8.1", "cu102", "7.5", SupportYes, false, "sm_70 code"},
		{"a CPU build", "2.5.1", "cpu", "8.0", SupportUnknown, false, ""},
		{"unreadable cc", "2.5.1", "cu121", "eight", SupportUnknown, false, "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildRunsOnGPU(tt.torch, tt.tag, tt.cc)
			if got.Support != tt.want || got.ViaPTX != tt.ptx || got.Reason == "" || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("buildRunsOnGPU(%s, %s, %s) = %+v", tt.torch, tt.tag, tt.cc, got)
			}
		})
	}
}

// archListFor returns the arch list of the official Linux wheel of a torch
// version and variant tag ("cu128"). ok is false when the table does not
// have that release and variant.
func archListFor(torchVersion, tag string) (ArchList, bool) {
	v, ok := parseTorch(torchVersion)
	if !ok {
		return ArchList{}, false
	}
	a, ok := facts().archOf[archKey(PlatformLinuxX86, v.minor, tag)]
	if !ok {
		return ArchList{}, false
	}
	return ArchList{SASS: slices.Clone(a.SASS), PTX: slices.Clone(a.PTX), Source: a.Source, Unverified: a.Unverified}, true
}

// buildRunsOnGPU says whether the official build (torchVersion, tag) has
// code for compute capability cc, so torch's "no kernel image is available
// for execution on the device" is caught before a run: SASS of the same
// major with a minor at or below cc's (8.6 code runs on 8.9), else PTX at or
// below cc to compile just in time. Unknown when the table lacks the
// release or variant, or cc cannot be read.
func buildRunsOnGPU(torchVersion, tag, cc string) ArchVerdict {
	v, ok := parseTorch(torchVersion)
	if !ok {
		return ArchVerdict{Reason: fmt.Sprintf("torch version %q cannot be read", torchVersion)}
	}
	list, note, ok := archFor(PlatformLinuxX86, v.minor, tag)
	if !ok {
		return ArchVerdict{Reason: fmt.Sprintf("the GPU architectures of torch %s %s are not in GPU Canary's table", torchVersion, tag)}
	}
	return buildRuns(list, note, torchVersion, tag, cc)
}
