package health

// The rule on the CUDA libraries of every package, judged by the
// architectures their fat binaries carry (pyenv.Env.CUDALibs), and the
// arch list of torch's own libtorch_cuda, which replaces the table's.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// torchBinary is the arch list of t's libtorch_cuda when it was read,
// with the evidence naming it; nil (the table's list) when it was not.
func (c *envCheck) torchBinary(t *pyenv.Package) (*kb.BinaryArchs, []pyenv.Evidence) {
	l := c.env.TorchCUDALib()
	if l == nil || l.Error != "" || t != c.env.Torch() {
		return nil, nil
	}
	return &kb.BinaryArchs{File: l.File, Kernels: l.Archs()},
		[]pyenv.Evidence{{File: l.File, Says: "carries " + l.Kernels}}
}

// libVerdict is one library on one GPU.
type libVerdict struct {
	gpu kb.GPU
	s   fatbin.Support
	by  fatbin.Arch
}

// cudaKernels judges every CUDA library of a package other than torch
// (whose libtorch_cuda the build verdict judges) on every GPU whose
// compute capability is known: no code at all for one is an error, PTX
// only a warning. One finding per library.
func (c *envCheck) cudaKernels() {
	if !c.g.HasDriver() {
		return
	}
	m := kb.MachineOf(c.g)
	for _, l := range c.env.CUDALibs {
		if l.Package == pyenv.Torch || l.Error != "" {
			continue
		}
		k := l.Archs()
		var missing, jit []libVerdict
		for _, g := range m.GPUs {
			cc, ok := fatbin.ParseArch(g.CC)
			if !ok {
				continue
			}
			switch s, by := k.Judge(cc); s {
			case fatbin.Missing:
				missing = append(missing, libVerdict{g, s, by})
			case fatbin.JIT:
				jit = append(jit, libVerdict{g, s, by})
			}
		}
		what := fmt.Sprintf("%s of %s%s (%s)", filepath.Base(l.File), l.Package, c.versionOf(l.Package), l.File)
		ev := []pyenv.Evidence{{File: l.File, Says: "carries " + l.Kernels}}
		switch {
		case len(missing) > 0:
			msg := fmt.Sprintf("%s has no kernels for %s: it carries %s, none of which runs there, so it fails with \"no kernel image is available for execution on the device\".",
				what, libGPUs(missing), l.Kernels)
			if len(jit) > 0 {
				msg += " " + jitWords(jit)
			}
			c.add(CodeCUDAKernelsMissing, SeverityError, msg+" Install a build of "+l.Package+" made for "+pronounGPU(len(missing))+".", "", ev)
		case len(jit) > 0:
			c.add(CodeCUDAKernelsMissing, SeverityWarning,
				fmt.Sprintf("%s has no machine code for %s (it carries %s). %s", what, libGPUs(jit), l.Kernels, jitWords(jit)), "", ev)
		}
	}
}

// jitWords says what PTX-only GPUs get.
func jitWords(vs []libVerdict) string {
	ptx := make([]string, len(vs))
	for i, v := range vs {
		ptx[i] = v.by.Compute()
	}
	return fmt.Sprintf("On %s it runs only through %s PTX, which the driver compiles just in time: the first start takes minutes, and the driver must support that PTX version.",
		libGPUs(vs), strings.Join(dedupe(ptx), ", "))
}

// libGPUs names GPUs with their sm_XY: "NVIDIA GeForce GTX 1080 Ti (sm_61)".
func libGPUs(vs []libVerdict) string {
	gs := make([]kb.GPU, len(vs))
	for i, v := range vs {
		gs[i] = v.gpu
	}
	return gpuLabels(gs)
}

func pronounGPU(n int) string {
	if n == 1 {
		return "that GPU"
	}
	return "those GPUs"
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// versionOf is " 0.3.16" for a package the environment's reading knows
// the version of, "" otherwise.
func (c *envCheck) versionOf(name string) string {
	if p := c.env.Packages[name]; p != nil && p.Version != "" {
		return " " + p.Version
	}
	return ""
}
