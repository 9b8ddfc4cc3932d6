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

// TestCheckBuildFromNewerRelease: a release newer than the table whose
// library is read is judged by that library, and only the driver floor
// stays inferred; the table's stand-in arch list is not named.
func TestCheckBuildFromNewerRelease(t *testing.T) {
	c := fatbintest.MustLoad(fatbintest.LinuxGGML)
	k, err := fatbin.Read(c, c.Size)
	if err != nil {
		t.Fatal(err)
	}
	bin := &BinaryArchs{File: "/x/torch/lib/libtorch_cuda.so", Kernels: k}
	m := Machine{DriverCUDA: "13.2", GPUs: []GPU{{Name: "NVIDIA GeForce GTX 1080 Ti", CC: "6.1"}}}
	table := CheckBuild("2.16.0+cu132", "13.2", m)
	if table.Inferred == "" || table.InferredFrom == "" {
		t.Fatalf("a release past the table is not inferred from it: %+v", table)
	}
	b := CheckBuildFrom("2.16.0+cu132", "13.2", m, bin)
	if b.InferredFrom != "" || strings.Contains(b.Inferred, "arch list of torch") {
		t.Errorf("judged by its own library, the verdict still names the table's stand-in: %+v", b)
	}
	if !strings.Contains(b.Inferred, "libtorch_cuda.so carries") || !strings.Contains(b.Inferred, "floor of CUDA 13.2") {
		t.Errorf("Inferred = %q, want the library named and the driver floor inferred", b.Inferred)
	}
	if len(b.GPUs) != 1 || b.GPUs[0].Support != SupportNo {
		t.Errorf("the 1080 Ti against the library: %+v", b.GPUs)
	}
	known := CheckBuildFrom("2.15.0+cu132", "13.2", m, bin)
	if known.Inferred != "" {
		t.Errorf("a release in the table read from its library is inferred: %q", known.Inferred)
	}
}
