package health

// The rule on the CUDA libraries of every package, judged by the
// architectures their fat binaries carry (pyenv.Env.CUDALibs), and the
// arch list of torch's own libtorch_cuda, which replaces the table's.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/finding"
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
	by  fatbin.Arch
}

// libJudged is one library's GPUs without machine code: none at all, or
// PTX only.
type libJudged struct {
	lib          pyenv.CUDALib
	missing, jit []libVerdict
}

// nvidiaWheels names NVIDIA's runtime wheels (nvidia-cublas-cu12, …) as
// one.
const nvidiaWheels = "NVIDIA's CUDA runtime wheels"

// cudaKernels judges every CUDA library of a package other than torch
// (whose libtorch_cuda the build verdict judges) on every GPU whose
// compute capability is known: no code at all for one is an error, PTX
// only a warning. One finding per package; NVIDIA's runtime wheels
// (nvidia-*), a dozen packages installed together, share one.
func (c *envCheck) cudaKernels() {
	if !c.g.HasDriver() {
		return
	}
	m := kb.MachineOf(c.g)
	var groups []string
	judged := map[string][]libJudged{}
	for _, l := range c.env.CUDALibs {
		if l.Package == pyenv.Torch || l.Error != "" {
			continue
		}
		j := libJudged{lib: l}
		k := l.Archs()
		for _, g := range m.GPUs {
			cc, ok := fatbin.ParseArch(g.CC)
			if !ok {
				continue
			}
			switch s, by := k.Judge(cc); s {
			case fatbin.Missing:
				j.missing = append(j.missing, libVerdict{g, by})
			case fatbin.JIT:
				j.jit = append(j.jit, libVerdict{g, by})
			}
		}
		if len(j.missing)+len(j.jit) == 0 {
			continue
		}
		key := l.Package
		if strings.HasPrefix(key, "nvidia-") {
			key = nvidiaWheels
		}
		if _, ok := judged[key]; !ok {
			groups = append(groups, key)
		}
		judged[key] = append(judged[key], j)
	}
	for _, key := range groups {
		c.kernelsFinding(key, judged[key])
	}
}

// kernelsFinding raises one package's finding: an error naming each
// library with no code for a GPU, else a warning naming each that
// reaches one through PTX only.
func (c *envCheck) kernelsFinding(key string, js []libJudged) {
	var ev []pyenv.Evidence
	var errs, warns []string
	for _, j := range js {
		ev = append(ev, pyenv.Evidence{File: j.lib.File, Says: "carries " + j.lib.Kernels})
		what := fmt.Sprintf("%s of %s%s (%s)", filepath.Base(j.lib.File), j.lib.Package, c.versionOf(j.lib.Package), j.lib.File)
		if len(j.missing) > 0 {
			msg := fmt.Sprintf("%s has no kernels for %s: it carries %s, none of which runs there, so it fails with \"no kernel image is available for execution on the device\".",
				what, libGPUs(j.missing), j.lib.Kernels)
			if len(j.jit) > 0 {
				msg += " " + jitWords(j.jit)
			}
			errs = append(errs, msg)
		} else {
			warns = append(warns, fmt.Sprintf("%s has no machine code for %s (it carries %s). %s", what, libGPUs(j.jit), j.lib.Kernels, jitWords(j.jit)))
		}
	}
	if len(errs) > 0 {
		advice := " Install a build of " + key + " made for the GPUs here."
		if key == nvidiaWheels {
			advice = " Install the wheels of a CUDA version that supports the GPUs here."
		}
		c.add(finding.CodeCUDAKernelsMissing, finding.SeverityError, strings.Join(append(errs, warns...), " ")+advice, "", ev)
		return
	}
	c.add(finding.CodeCUDAKernelsMissing, finding.SeverityWarning, strings.Join(warns, " "), "", ev)
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
