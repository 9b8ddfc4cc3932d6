package text

import (
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// kernels prints what each CUDA library carries (pyenv.KernelLines):
//
//	kernels           libggml-cuda.so (llama-cpp-python): sm_86 sm_89 sm_120 sm_121 · PTX 75 80 90
func (p Printer) kernels(e monitor.EnvReport) {
	for i, l := range pyenv.KernelLines(e.CUDALibs) {
		label := ""
		if i == 0 {
			label = "kernels"
		}
		p.printf("  %-17s %s\n", label, l)
	}
}
