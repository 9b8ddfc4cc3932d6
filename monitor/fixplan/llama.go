package fixplan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// ErrNoLlama is returned when the environment has no llama-cpp-python to
// reinstall.
var ErrNoLlama = errors.New("llama-cpp-python is not installed")

// NewLlamaPlan decides how to give the llama-cpp-python in r.Env its CUDA
// backend (LLAMA_CPP_CPU_BUILD): the installed release again, from the
// newest of llama-cpp-python's CUDA wheel indexes this driver supports
// (kb.ChooseLlamaWheel), as a forced reinstall without dependencies, as
// torch's repair of its own build is (FormRepair): nothing else moves.
// Where no wheel fits (the driver is too old, a platform with no CUDA
// wheels, a release older than the wheels) the plan is Blocked with why,
// and Manual is the build from source with the environment's own
// installer, which GPU Canary does not run: it needs the CUDA toolkit
// and a compiler, and takes long. Like NewPlan, an environment whose
// interpreter cannot run is blocked first.
func NewLlamaPlan(r Request) (Plan, error) {
	if r.Env == nil {
		return Plan{}, errors.New("planning a reinstall: no environment")
	}
	if p, ok := interpreterPlan(r.Env); ok {
		p.Package = pyenv.LlamaCppPython
		return p, nil
	}
	l := r.Env.Packages[pyenv.LlamaCppPython]
	if l == nil {
		return Plan{}, fmt.Errorf("planning a reinstall in %s: %w", r.Env.Path, ErrNoLlama)
	}
	p := Plan{Env: r.Env.Path, Package: pyenv.LlamaCppPython}
	version := kb.PublicVersion(l.Version)
	if version == "" {
		p.Blocked = fmt.Sprintf("the installed llama-cpp-python version %q cannot be read", l.Version)
		return p, nil
	}
	p.Packages = []Pin{{pyenv.LlamaCppPython, version}}
	p.Reasons = append(p.Reasons, fmt.Sprintf("llama-cpp-python %s stays at its release; only its build changes", version))
	if !r.GPU.HasDriver() {
		p.Blocked = "no NVIDIA driver answered, so no CUDA wheel of llama-cpp-python can be chosen; built from source with CUDA (which needs the CUDA toolkit and a C++ compiler, and which GPU Canary does not run) it gets its CUDA backend"
		p.Manual = llamaSourceBuild(r, l, version)
		return p, nil
	}
	w, ok := kb.ChooseLlamaWheel(version, kb.MachineOf(r.GPU), r.WheelPlatform)
	if !ok {
		p.Blocked = w.Reason + ", so no prebuilt CUDA wheel fits; built from source with CUDA (which needs the CUDA toolkit and a C++ compiler, and which GPU Canary does not run) it gets its CUDA backend"
		p.Manual = llamaSourceBuild(r, l, version)
		return p, nil
	}
	p.Variant, p.CUDA = w.Tag, w.CUDA
	p.Index = uvproject.IndexURL(llamaIndexBase(r), w.Tag)
	p.Reasons = append(p.Reasons, w.Reason,
		"the index is the only one asked (--index-url): with PyPI beside it the installer could take PyPI's source release of the same version and build it for the CPU again")
	c := llamaInstaller(r, l, managers.ReinstallRequest{Specs: []string{pyenv.LlamaCppPython + "==" + version}, Index: p.Index, CUDA: p.CUDA})
	p.Installer, p.Argv, p.Blocked = c.Manager, c.Argv, c.Blocked
	p.Reasons = append(p.Reasons, c.Reasons...)
	if p.Blocked == "" {
		p.Consequences = editableConsequences(r.Env, p.Packages, false)
	}
	return p, nil
}

// llamaInstaller asks the manager table who reinstalls llama-cpp-python,
// as installer does for torch, with the request's pins, index and cache
// flag, in FormRepair. A conda that refuses is answered in
// llama-cpp-python's words, not torch's.
func llamaInstaller(r Request, l *pyenv.Package, q managers.ReinstallRequest) managers.ReinstallChoice {
	q.Env, q.Python, q.What = r.Env, r.Env.Interpreter(), pyenv.LlamaCppPython
	q.Form, q.LookPath, q.HostPython, q.Quote = managers.FormRepair, r.LookPath, r.HostPython, shell.Quote
	c := managers.ReinstallCommand(l, q)
	if c.Blocked != "" && c.Manager == pyenv.InstallerConda {
		c.Blocked = "llama-cpp-python in this environment was installed by conda; reinstalling it with pip would leave conda's records wrong. Install a CUDA build of it with conda, or remove conda's llama-cpp-python first and let GPU Canary install the pip wheel"
	}
	return c
}

// llamaSourceBuild is the command that builds the installed release from
// source with the CUDA backend, with the installer the wheel's reinstall
// would use, without its cache (a cached CPU build would be taken
// again): CMAKE_ARGS="-DGGML_CUDA=on" before it, as llama-cpp-python's
// README asks, in the syntax of the shell the environment's layout
// suggests. "" when no installer can be named (conda refuses).
func llamaSourceBuild(r Request, l *pyenv.Package, version string) string {
	c := llamaInstaller(r, l, managers.ReinstallRequest{Specs: []string{pyenv.LlamaCppPython + "==" + version}, NoCache: true})
	if len(c.Argv) == 0 {
		return ""
	}
	cmd := shell.Join(c.Argv)
	if r.Env.Layout == pyenv.LayoutWindows {
		return `$env:CMAKE_ARGS = "-DGGML_CUDA=on"; ` + cmd
	}
	return `CMAKE_ARGS="-DGGML_CUDA=on" ` + cmd
}

// llamaIndexBase is r's llama-cpp-python index base, or the official one.
func llamaIndexBase(r Request) string {
	if b := strings.TrimRight(r.LlamaIndexBase, "/"); b != "" {
		return b
	}
	return kb.LlamaIndexBase
}
