package procs

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// kernelLibs are the mapped libraries whose kernels decide whether a
// process can use a GPU: torch's, llama.cpp's CUDA backend, onnxruntime's
// CUDA provider.
const kernelLibs = libTorchCUDA | libGGMLCUDA | libONNXCUDA

// missingKernels says which mapped CUDA library has no code for which
// GPU, read from its fat binary ("libggml-cuda.so has no kernels for
// NVIDIA GeForce GTX 1080 Ti (sm_61): it carries sm_86 … · PTX 75 80 90"),
// or "" when each runs on every GPU whose compute capability is known,
// or none could be read. A CUDA backend that cannot run on the GPU is
// why such a process computes on the CPU. The kernels come from the
// caller's cache (read again only when a library changes); nil reads
// them every time.
func missingKernels(p *Proc, devices []gpu.Device, kernels *fatbin.Cache) string {
	if kernels == nil {
		kernels = &fatbin.Cache{}
	}
	for _, path := range p.LibPaths {
		// libc10_cuda carries a few kernels of its own; libtorch_cuda's
		// are torch's.
		kind, _ := runtimeLib(path)
		if kind&kernelLibs == 0 || strings.HasPrefix(strings.TrimPrefix(strings.ToLower(filepath.Base(path)), "lib"), "c10") {
			continue
		}
		k, err := kernels.ReadFile(path)
		if err != nil {
			continue
		}
		var missing []string
		for _, d := range devices {
			cc, ok := fatbin.ParseArch(d.ComputeCapability)
			if !ok {
				continue
			}
			if s, _ := k.Judge(cc); s == fatbin.Missing {
				missing = append(missing, fmt.Sprintf("%s (%s)", d.Name, cc.SM()))
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("its CUDA library %s has no kernels for %s (it carries %s)", filepath.Base(path), strings.Join(missing, " and "), k)
		}
	}
	return ""
}
