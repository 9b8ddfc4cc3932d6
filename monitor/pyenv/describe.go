package pyenv

import (
	"slices"
	"strings"
)

// BuildText says what a package was built for, in a few words: "CUDA 12.1",
// "CPU only", "ROCm 6.2", "XPU", "build unknown". Every view (check, the
// tray, events) uses it, so they say the same thing.
func (p *Package) BuildText() string {
	switch p.Build {
	case BuildCUDA:
		if p.CUDA != "" {
			return "CUDA " + p.CUDA
		}
		return "CUDA"
	case BuildCPU:
		return "CPU only"
	case BuildROCm:
		if p.ROCm != "" {
			return "ROCm " + p.ROCm
		}
		return "ROCm"
	case BuildXPU:
		return "XPU"
	}
	return "build unknown"
}

// Describe is BuildText for torch and its companions, and the shipped
// backends for llama-cpp-python and bitsandbytes.
func Describe(name string, p *Package) string {
	switch name {
	case LlamaCppPython:
		if len(p.Backends) == 0 {
			// Every backend, the CPU's included, is a library of its
			// own or inside libllama: with none found there is no
			// backend to name, and import llama_cpp fails, unless its
			// code is where GPU Canary did not look (llama.go).
			if slices.ContainsFunc(p.Problems, func(pr Problem) bool { return pr.Kind == ProblemHalfDeleted }) {
				return "no libllama or ggml library: it cannot load"
			}
			return "no libllama or ggml library found"
		}
		return "backends: " + strings.Join(p.Backends, ", ")
	case BitsAndBytes:
		if len(p.Backends) == 0 {
			return "no CUDA libraries"
		}
		return "CUDA libraries: " + strings.Join(p.Backends, ", ")
	}
	return p.BuildText()
}
