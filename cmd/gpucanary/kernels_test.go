package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// simGPU is a --gpu-sim scenario with one GPU.
func simGPU(name, cc string) string {
	return fmt.Sprintf(`{"driver": "580.65.06", "cuda_driver": "13.0",
 "devices": [{"name": %q, "uuid": "GPU-0000", "compute_capability": %q, "memory_total_bytes": 11811160064, "processes": []}]}`, name, cc)
}

// TestCheckKernels: check of a llama-cpp-python environment holding the
// real libggml-cuda.so (ggml-cuda.dll) says what it carries, and judges
// it per simulated GPU, in text and JSON.
func TestCheckKernels(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	llama := &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}
	for _, layout := range []struct {
		spec        pyenvtest.Spec
		rel, carved string
	}{
		{pyenvtest.Spec{Llama: llama}, "llama_cpp/lib/libggml-cuda.so", fatbintest.LinuxGGML},
		{pyenvtest.Spec{Layout: pyenv.LayoutWindows, Llama: llama}, "llama_cpp/lib/ggml-cuda.dll", fatbintest.WindowsGGML},
	} {
		root := filepath.Join(t.TempDir(), "venv")
		if err := pyenvtest.Write(root, layout.spec); err != nil {
			t.Fatal(err)
		}
		lib, err := pyenvtest.PutRealLibrary(root, layout.spec, layout.rel, fatbintest.MustLoad(layout.carved))
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(lib)
		for _, tc := range []struct {
			gpu, cc string
			code    int
			says    []string
		}{
			{"NVIDIA GeForce GTX 1080 Ti", "6.1", exitFound, []string{"CUDA_KERNELS_MISSING", "(sm_61)", lib, "ERROR"}},
			{"NVIDIA GeForce RTX 3060", "8.6", exitOK, []string{"0 with errors, 0 with warnings"}},
			{"NVIDIA A100-SXM4-80GB", "8.0", exitOK, []string{"CUDA_KERNELS_MISSING", "compute_80 PTX", "WARNING"}},
		} {
			t.Run(base+" "+tc.cc, func(t *testing.T) {
				sim := simFile(t, simGPU(tc.gpu, tc.cc))
				out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", root)
				kernels := "kernels           " + base + " (llama-cpp-python): " + fatbintest.GGMLKernels
				if code != tc.code || !strings.Contains(out, kernels) {
					t.Fatalf("exit %d (want %d), no %q:\n%s\n%s", code, tc.code, kernels, out, stderr)
				}
				for _, s := range tc.says {
					if !strings.Contains(out, s) {
						t.Errorf("check does not say %q:\n%s", s, out)
					}
				}
				prom, _, _ := runCLI(t, "--gpu-sim", sim, "check", "--format", "prom", root)
				series := `gpucanary_env_findings{code="CUDA_KERNELS_MISSING",env="` + root + `",severity=`
				if strings.Contains(prom, series) != (tc.cc != "8.6") {
					t.Errorf("the Prometheus finding series %s… present: %v, want %v", series, strings.Contains(prom, series), tc.cc != "8.6")
				}
				js, _, _ := runCLI(t, "--gpu-sim", sim, "check", "--json", root)
				var r struct {
					Envs []struct {
						CUDALibs []pyenv.CUDALib `json:"cuda_libs"`
					} `json:"envs"`
				}
				if err := json.Unmarshal([]byte(js), &r); err != nil || len(r.Envs) != 1 || len(r.Envs[0].CUDALibs) != 1 {
					t.Fatalf("check --json: %v\n%s", err, js)
				}
				l := r.Envs[0].CUDALibs[0]
				if l.File != lib || l.Kernels != fatbintest.GGMLKernels || strings.Join(l.SASS, " ") != "sm_86 sm_89 sm_120 sm_121" || strings.Join(l.PTX, " ") != "compute_75 compute_80 compute_90" {
					t.Errorf("cuda_libs %+v", l)
				}
			})
		}
	}
}
