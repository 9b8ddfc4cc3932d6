package present

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestKernelRows judges each arch of a library on the machine's GPUs as
// CUDA_KERNELS_MISSING does: the SASS a GPU loads runs, PTX only where
// no SASS fits, and a GPU with neither gets a chip of its own.
func TestKernelRows(t *testing.T) {
	dev := func(i int, name, cc string) gpu.Device {
		return gpu.Device{Index: i, Name: name, ComputeCapability: cc}
	}
	a100 := gpu.State{Driver: "550.54.15", Devices: []gpu.Device{dev(0, "A100", "8.0")}}
	mixed := gpu.State{Driver: "570.1", Devices: []gpu.Device{dev(0, "RTX 4090", "8.9"), dev(1, "RTX 5090", "12.0")}}
	lib := func(pkg, file string, sass, ptx []string) pyenv.CUDALib {
		l := pyenv.CUDALib{Package: pkg, File: file, SASS: sass, PTX: ptx}
		l.Kernels = l.Archs().String()
		return l
	}
	ggml := lib("llama-cpp-python", "/e/lib/libggml-cuda.so", []string{"sm_75", "sm_80", "sm_86"}, []string{"compute_80"})
	tests := []struct {
		name string
		libs []pyenv.CUDALib
		g    gpu.State
		want []string // "text:state" per chip, a row per element
	}{
		{"sm_80 runs on an A100, the rest is unused", []pyenv.CUDALib{ggml}, a100,
			[]string{"sm_75:0 sm_80:1 sm_86:0 PTX 80:0"}},
		{"8.9 runs sm_86; 12.0 compiles PTX 80", []pyenv.CUDALib{ggml}, mixed,
			[]string{"sm_75:0 sm_80:0 sm_86:1 PTX 80:2"}},
		{"no code for a GPU", []pyenv.CUDALib{lib("flash-attn-3", "/e/_C.so", []string{"sm_90a"}, nil)}, a100,
			[]string{"sm_90a:0 none for GPU 0:3"}},
		{"no driver: nothing to judge on", []pyenv.CUDALib{ggml}, gpu.State{},
			[]string{"sm_75:0 sm_80:0 sm_86:0 PTX 80:0"}},
		{"same kernels share a row; an unreadable one has none",
			[]pyenv.CUDALib{ggml, lib("llama-cpp-python", "/e/lib/libllama.so", []string{"sm_75", "sm_80", "sm_86"}, []string{"compute_80"}),
				{Package: "x", File: "/e/x.so", Error: "truncated"}}, a100,
			[]string{"sm_75:0 sm_80:1 sm_86:0 PTX 80:0", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := KernelRows(tc.libs, tc.g)
			var got []string
			for _, r := range rows {
				s := ""
				for i, c := range r.Chips {
					if i > 0 {
						s += " "
					}
					s += fmt.Sprintf("%s:%d", c.Text, c.State)
					if c.Tip == "" {
						t.Errorf("%s has no tip", c.Text)
					}
				}
				got = append(got, s)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("chips %q, want %q", got, tc.want)
			}
		})
	}
	rows := KernelRows([]pyenv.CUDALib{ggml, lib("llama-cpp-python", "/e/lib/libllama.so", ggml.SASS, ggml.PTX), {Package: "x", File: "/e/x.so", Error: "truncated"}}, a100)
	if rows[0].Label != "libggml-cuda.so, libllama.so (llama-cpp-python)" || rows[1].Error != "truncated" {
		t.Errorf("rows %+v", rows)
	}
	if tip := KernelRows([]pyenv.CUDALib{ggml}, a100)[0].Chips[1].Tip; tip != "Machine code that runs on GPU 0 (A100, 8.0)." {
		t.Errorf("tip %q", tip)
	}
}
