package kb

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
)

// TestCheckBuildFrom: a source build the table cannot judge is judged
// by the real libggml-cuda.so's arch list standing in as its
// libtorch_cuda.so.
func TestCheckBuildFrom(t *testing.T) {
	c := fatbintest.MustLoad(fatbintest.LinuxGGML)
	k, err := fatbin.Read(c, c.Size)
	if err != nil {
		t.Fatal(err)
	}
	bin := &BinaryArchs{File: "/x/torch/lib/libtorch_cuda.so", Kernels: k}
	for _, tc := range []struct {
		gpu, cc string
		support Support
		ptx     bool
		reason  string
	}{
		{"NVIDIA GeForce GTX 1080 Ti", "6.1", SupportNo, false, "has code for sm_86, sm_89, sm_120, sm_121 and PTX compute_75, compute_80, compute_90 only, none of which runs on sm_61"},
		{"NVIDIA GeForce RTX 3060", "8.6", SupportYes, false, "libtorch_cuda.so has sm_86 code"},
		{"NVIDIA A100-SXM4-80GB", "8.0", SupportYes, true, "compute_80 PTX"},
		{"NVIDIA GeForce RTX 5090", "12.0", SupportYes, false, "sm_120 code"},
	} {
		m := Machine{DriverCUDA: "13.0", GPUs: []GPU{{Name: tc.gpu, CC: tc.cc}}}
		plain := CheckBuild("2.6.0a0+gitabc", "12.4", m)
		if plain.Unchecked == "" {
			t.Fatalf("the table judged a source build: %+v", plain)
		}
		b := CheckBuildFrom("2.6.0a0+gitabc", "12.4", m, bin)
		if b.Unchecked != "" || len(b.GPUs) != 1 {
			t.Fatalf("%s: %+v", tc.gpu, b)
		}
		v := b.GPUs[0]
		if v.Support != tc.support || v.ViaPTX != tc.ptx || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%s: %+v, want %v ptx=%v saying %q", tc.gpu, v.ArchVerdict, tc.support, tc.ptx, tc.reason)
		}
		if b.Driver != plain.Driver {
			t.Errorf("%s: the driver verdict changed: %+v, %+v", tc.gpu, b.Driver, plain.Driver)
		}
	}
	if got := CheckBuildFrom("2.5.1+cu124", "12.4", Machine{DriverCUDA: "12.4", GPUs: []GPU{{Name: "x", CC: "8.6"}}}, nil); got.Unchecked != "" || len(got.GPUs) != 1 {
		t.Errorf("nil bin is not CheckBuild: %+v", got)
	}
}
