package health

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	pep440 "github.com/aquasecurity/go-pep440-version"

	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Options carries what the rules need besides the environment and the GPU.
type Options struct {
	// IndexBase is the PyTorch index base for fix commands ("" = official).
	IndexBase string
	// Getenv reads GPU Canary's own environment (BNB_CUDA_VERSION); nil
	// means no variables are set.
	Getenv func(string) string
	// LookPath finds uv for fix commands; nil means "assume it is there",
	// which is right for advice shown to a person.
	LookPath func(string) (string, error)
}

// CheckGPU reports what is wrong with the machine's GPU as a whole.
func CheckGPU(g gpu.State) []Finding {
	if g.HasDriver() {
		return nil
	}
	msg := "No NVIDIA driver answered: GPU Canary still checks environments, but cannot tell which CUDA builds run here."
	if g.Error != "" {
		msg += " (" + g.Error + ")"
	}
	return []Finding{{Code: CodeNoGPUDriver, Severity: SeverityWarning, Message: msg}}
}

// Unreadable is the finding for an environment that could not be read.
func Unreadable(path string, err error) Finding {
	return Finding{Code: CodeEnvUnreadable, Severity: SeverityError, Env: path,
		Message: fmt.Sprintf("The environment at %s could not be read: %v.", path, err)}
}

// NotCreated is the finding for a project folder whose environment does
// not exist yet: whose project it is (rule, "uv project") and the command
// that creates it.
func NotCreated(project, rule, create string) Finding {
	what := project
	if rule != "" {
		what += " (" + rule + ")"
	}
	return Finding{Code: CodeEnvNotCreated, Severity: SeverityWarning, Env: project, Fix: create,
		Message: fmt.Sprintf("%s has no environment yet, so there is no torch to check. Create it with `%s` in that folder, then check again.", what, create)}
}

// CheckEnv evaluates every rule on one environment.
func CheckEnv(env *pyenv.Env, g gpu.State, o Options) []Finding {
	c := envCheck{env: env, g: g, o: o}
	c.problems()
	if t := env.Torch(); t != nil {
		c.torch(t)
		c.family(t)
		c.bitsandbytes(t)
	}
	c.llama()
	return c.out
}

type envCheck struct {
	env *pyenv.Env
	g   gpu.State
	o   Options
	out []Finding
	fix string // cached fix command, "" when none
	did bool
}

func (c *envCheck) add(code string, sev Severity, msg string, fix string, ev []pyenv.Evidence) {
	c.out = append(c.out, Finding{Code: code, Severity: sev, Message: msg, Fix: fix, Env: c.env.Path, Evidence: ev})
}

// reinstall is the command that reinstalls the right CUDA torch here, or "".
func (c *envCheck) reinstall() string {
	if c.did {
		return c.fix
	}
	c.did = true
	look := c.o.LookPath
	if look == nil {
		look = func(name string) (string, error) { return name, nil }
	}
	p, err := fix.NewPlan(fix.Request{Env: c.env, GPU: c.g, IndexBase: c.o.IndexBase, LookPath: look})
	if err == nil && p.Blocked == "" {
		c.fix = p.Command()
	}
	return c.fix
}

// hasGPU is true when an NVIDIA GPU is present (simulated or real).
func (c *envCheck) hasGPU() bool { return c.g.HasDriver() && len(c.g.Devices) > 0 }

func (c *envCheck) gpuName() string {
	if len(c.g.Devices) == 0 {
		return "an NVIDIA GPU"
	}
	return "an " + c.g.Devices[0].Name
}

func (c *envCheck) problems() {
	for _, p := range c.env.Problems {
		code, sev := CodeTorchInstallBroken, SeverityWarning
		if p.Kind == pyenv.ProblemUnreadable {
			code, sev = CodeEnvUnreadable, SeverityError
		}
		c.add(code, sev, p.Message, "", []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
	}
	for _, name := range sortedKeys(c.env.Packages) {
		for _, p := range c.env.Packages[name].Problems {
			code, sev := CodeTorchInstallBroken, SeverityError
			fixCmd := ""
			if name == pyenv.Torch {
				fixCmd = c.reinstall()
			}
			switch {
			case p.Kind == pyenv.ProblemUnreadable:
				code = CodeEnvUnreadable
			case p.Kind == pyenv.ProblemPipStash:
				sev = SeverityWarning
			case name != pyenv.Torch:
				sev = SeverityWarning
			}
			c.add(code, sev, fmt.Sprintf("%s: %s", name, p.Message), fixCmd, []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
		}
	}
}

func (c *envCheck) torch(t *pyenv.Package) {
	switch t.Build {
	case pyenv.BuildCPU:
		if c.hasGPU() {
			c.add(CodeTorchCPUBuild, SeverityError,
				fmt.Sprintf("torch %s is a CPU-only build, but this machine has %s: everything in this environment runs on the CPU.", t.Version, c.gpuName()),
				c.reinstall(), t.Evidence)
		} else {
			c.add(CodeTorchCPUBuild, SeverityInfo,
				fmt.Sprintf("torch %s is a CPU-only build (no NVIDIA GPU is present, so this is fine here).", t.Version), "", t.Evidence)
		}
	case pyenv.BuildUnknown:
		c.add(CodeTorchBuildUnknown, SeverityWarning,
			fmt.Sprintf("torch %s is installed, but its files do not say which build it is (CUDA, CPU or ROCm).", t.Version), "", t.Evidence)
	case pyenv.BuildCUDA:
		c.cudaTorch(t)
	}
}

// cudaTorch checks a CUDA build against the driver and every GPU.
func (c *envCheck) cudaTorch(t *pyenv.Package) {
	if !c.g.HasDriver() {
		return
	}
	if c.g.CUDADriver != "" {
		v := kb.DriverRuns(t.CUDA, c.g.CUDADriver)
		switch {
		case v.Support == kb.SupportNo:
			c.add(CodeDriverTooOld, SeverityError,
				fmt.Sprintf("torch %s is built for CUDA %s, but the NVIDIA driver %s supports CUDA %s at most: torch will fail with \"The NVIDIA driver on your system is too old\". %s",
					t.Version, t.CUDA, c.g.Driver, c.g.CUDADriver, v.Reason),
				c.reinstall(), t.Evidence)
		case v.Support == kb.SupportYes && v.MinorCompat:
			c.add(CodeDriverTooOld, SeverityWarning,
				fmt.Sprintf("torch %s is built for CUDA %s and the driver %s supports CUDA %s: it runs through CUDA minor-version compatibility, but kernels compiled just in time from PTX will fail. %s",
					t.Version, t.CUDA, c.g.Driver, c.g.CUDADriver, v.Reason),
				c.reinstall(), t.Evidence)
		}
	}
	public := fix.PublicVersion(t.Version)
	if !kb.Known(public) {
		c.add(CodeTorchUnknownRelease, SeverityInfo,
			fmt.Sprintf("torch %s is newer than GPU Canary's release table: its GPU architectures and driver needs are read from the environment only.", t.Version), "", t.Evidence)
		return
	}
	tag := kb.TagForCUDA(t.CUDA)
	seen := map[string]bool{}
	for _, d := range c.g.Devices {
		if d.ComputeCapability == "" || seen[d.ComputeCapability] {
			continue
		}
		seen[d.ComputeCapability] = true
		v := kb.BuildRunsOnGPU(public, tag, d.ComputeCapability)
		if v.Support != kb.SupportNo {
			continue
		}
		arch, _ := kb.Architecture(d.ComputeCapability)
		c.add(CodeGPUArchUnsupported, SeverityError,
			fmt.Sprintf("torch %s (%s) has no kernels for the %s (%s, sm_%s): torch will say \"no kernel image is available for execution on the device\". %s",
				t.Version, tag, d.Name, arch, strings.ReplaceAll(d.ComputeCapability, ".", ""), v.Reason),
			c.reinstall(), t.Evidence)
	}
}

// family checks that torchvision and torchaudio match torch's version and variant.
func (c *envCheck) family(t *pyenv.Package) {
	public := fix.PublicVersion(t.Version)
	vision, audio, known := kb.Companions(public)
	for _, comp := range []struct{ name, want string }{{pyenv.TorchVision, vision}, {pyenv.TorchAudio, audio}} {
		p := c.env.Packages[comp.name]
		if p == nil {
			continue
		}
		ev := append(slices.Clone(t.Evidence), p.Evidence...)
		if known && comp.want != "" && fix.PublicVersion(p.Version) != comp.want {
			c.add(CodeTorchFamilyMismatch, SeverityError,
				fmt.Sprintf("%s %s does not belong with torch %s (it needs %s %s): importing it fails or its compiled operators are missing.", comp.name, p.Version, t.Version, comp.name, comp.want),
				c.reinstall(), ev)
			continue
		}
		if mismatch(t, p) {
			c.add(CodeTorchFamilyMismatch, SeverityError,
				fmt.Sprintf("%s %s (%s) does not match torch %s (%s): its GPU operators (nms, decoders) will not load.", comp.name, p.Version, p.BuildText(), t.Version, t.BuildText()),
				c.reinstall(), ev)
		}
	}
}

// mismatch is true when a companion's build differs from torch's in kind
// or CUDA version, as far as both are known.
func mismatch(t, p *pyenv.Package) bool {
	if t.Build == pyenv.BuildUnknown || p.Build == pyenv.BuildUnknown {
		return false
	}
	if t.Build != p.Build {
		return true
	}
	return t.Build == pyenv.BuildCUDA && t.CUDA != "" && p.CUDA != "" && t.CUDA != p.CUDA
}

// bitsandbytes checks that the CUDA library bitsandbytes will load for this
// torch (or for BNB_CUDA_VERSION) is shipped.
func (c *envCheck) bitsandbytes(t *pyenv.Package) {
	b := c.env.Packages[pyenv.BitsAndBytes]
	if b == nil || t.Build != pyenv.BuildCUDA || t.CUDA == "" {
		return
	}
	want := strings.ReplaceAll(t.CUDA, ".", "")
	why := fmt.Sprintf("torch's CUDA %s", t.CUDA)
	if c.o.Getenv != nil {
		if o := strings.TrimSpace(c.o.Getenv("BNB_CUDA_VERSION")); o != "" {
			want, why = o, "BNB_CUDA_VERSION="+o
		}
	}
	if slices.Contains(b.Backends, want) {
		return
	}
	shipped := strings.Join(b.Backends, ", ")
	if shipped == "" {
		shipped = "none"
	}
	if atLeast(b.Version, "0.50") {
		if best := bestBNB(b.Backends, want); best != "" {
			return
		}
		c.add(CodeBNBCUDAMismatch, SeverityError,
			fmt.Sprintf("bitsandbytes %s has no CUDA library for %s (it ships CUDA %s, and none of the same major version at or below it): 8-bit and 4-bit layers will fail to load.", b.Version, why, shipped),
			"", b.Evidence)
		return
	}
	c.add(CodeBNBCUDAMismatch, SeverityError,
		fmt.Sprintf("bitsandbytes %s will look for libbitsandbytes_cuda%s because of %s, and does not ship it (it ships CUDA %s): it will raise \"Configured CUDA binary not found\".", b.Version, want, why, shipped),
		"", b.Evidence)
}

// bestBNB is what bitsandbytes 0.50+ loads: the highest shipped version at
// or below want in the same major, or "".
func bestBNB(shipped []string, want string) string {
	w, err := strconv.Atoi(want)
	if err != nil || len(want) < 2 {
		return ""
	}
	major := want[:len(want)-1]
	best := -1
	for _, s := range shipped {
		n, err := strconv.Atoi(s)
		if err != nil || len(s) < 2 || s[:len(s)-1] != major || n > w {
			continue
		}
		best = max(best, n)
	}
	if best < 0 {
		return ""
	}
	return strconv.Itoa(best)
}

// llama reports a llama-cpp-python without a GPU backend.
func (c *envCheck) llama() {
	l := c.env.Packages[pyenv.LlamaCppPython]
	if l == nil {
		return
	}
	for _, b := range l.Backends {
		if b == "cuda" || b == "hip" || b == "vulkan" {
			return
		}
	}
	if !c.hasGPU() {
		c.add(CodeLlamaCPPCPUBuild, SeverityInfo,
			fmt.Sprintf("llama-cpp-python %s is built for the CPU only (no NVIDIA GPU is present, so this is fine here).", l.Version), "", l.Evidence)
		return
	}
	c.add(CodeLlamaCPPCPUBuild, SeverityError,
		fmt.Sprintf("llama-cpp-python %s has no CUDA backend: every layer runs on the CPU, whatever n_gpu_layers says, although this machine has %s.", l.Version, c.gpuName()),
		llamaFix(c.env, l.Version), l.Evidence)
}

func llamaFix(env *pyenv.Env, version string) string {
	return `CMAKE_ARGS="-DGGML_CUDA=on" ` + strings.Join([]string{
		fix.ShellQuote(fix.Interpreter(env)), "-m", "pip", "install", "--force-reinstall", "--no-cache-dir", "--no-deps",
		"llama-cpp-python==" + version}, " ")
}

func atLeast(v, floor string) bool {
	a, err1 := pep440.Parse(v)
	b, err2 := pep440.Parse(floor)
	return err1 == nil && err2 == nil && a.GreaterThanOrEqual(b)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
