package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// BenchmarkCheck20EnvsCUDALibs is BenchmarkCheck20Envs with real-size
// CUDA libraries: each environment's libtorch_cuda.so and libc10_cuda.so
// are the 159 MB libggml-cuda.so's real headers (sparse files), so every
// check reads or, from the second on, stats them through the kernel
// cache in XDG_CACHE_HOME (warm). Issue 28's goal: within 1.5x of
// BenchmarkCheck20Envs.
func BenchmarkCheck20EnvsCUDALibs(b *testing.B) {
	paths := benchEnvs(b, 20)
	lib := fatbintest.MustLoad(fatbintest.LinuxGGML)
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}}
	for _, p := range paths {
		for _, rel := range []string{"torch/lib/libtorch_cuda.so", "torch/lib/libc10_cuda.so"} {
			if _, err := pyenvtest.PutRealLibrary(p, spec, rel, lib); err != nil {
				b.Fatal(err)
			}
		}
	}
	sim := filepath.Join(b.TempDir(), "gpu.json")
	// An RTX 3060 (sm_86), which the libraries run on: as with
	// BenchmarkCheck20Envs's A100, no finding, so only reading differs.
	if err := os.WriteFile(sim, []byte(simGPU("NVIDIA GeForce RTX 3060", "8.6")), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := cliBinary(b)
	args := append([]string{"--gpu-sim", sim, "check", "--json"}, paths...)
	env := append(os.Environ(), "XDG_CONFIG_HOME="+b.TempDir(), "XDG_CACHE_HOME="+b.TempDir())
	check := func() {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if out, err := cmd.Output(); err != nil && len(out) == 0 {
			b.Fatalf("check: %v", err)
		}
	}
	check() // warms the cache
	for b.Loop() {
		check()
	}
}
