package health

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	pep440 "github.com/aquasecurity/go-pep440-version"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// Options carries what the rules need besides the environment and the GPU.
type Options struct {
	// Getenv reads GPU Canary's own environment (BNB_CUDA_VERSION); nil
	// means no variables are set.
	Getenv func(string) string
	// Advice chooses every fix command a finding shows that a repair
	// plan makes too (a torch reinstall, llama-cpp-python's CUDA build,
	// an environment made again): the planner's (monitor/fixplan), so
	// the advice and the repair never disagree. Its zero value plans from
	// the official indexes; the settings' mirrors are its IndexBase and
	// LlamaIndexBase.
	Advice fixplan.Advice
}

// CheckGPU reports what is wrong with the machine's GPU as a whole.
func CheckGPU(g gpu.State) []finding.Finding {
	if g.HasDriver() {
		return nil
	}
	msg := "No NVIDIA driver answered: GPU Canary still checks environments, but cannot tell which CUDA builds run here."
	if g.Error != "" {
		msg += " (" + g.Error + ")"
	}
	return []finding.Finding{{Code: finding.CodeNoGPUDriver, Severity: finding.SeverityWarning, Message: msg}}
}

// Unreadable is the finding for an environment that could not be read.
func Unreadable(path string, err error) finding.Finding {
	return finding.Finding{Code: finding.CodeEnvUnreadable, Severity: finding.SeverityError, Env: path,
		Message: fmt.Sprintf("The environment at %s could not be read: %v.", path, err)}
}

// NotCreated is the finding for a project folder whose environment does
// not exist yet: whose project it is (rule, "uv project") and the command
// that creates it.
func NotCreated(project, rule, create string) finding.Finding {
	return finding.Finding{Code: finding.CodeEnvNotCreated, Severity: finding.SeverityWarning, Env: project, Fix: create,
		Message: managers.NotCreatedSentence(project, rule, create) + ", then check again (until then there is no torch to check)."}
}

// CheckEnv evaluates every rule on one environment.
func CheckEnv(env *pyenv.Env, g gpu.State, o Options) []finding.Finding {
	c := envCheck{env: env, g: g, o: o}
	c.problems()
	if t := env.Torch(); t != nil {
		start := len(c.out)
		c.torch(t)
		c.origin(t, c.out[start:])
		c.pathCode(t)
		c.family(t)
		c.bitsandbytes(t)
	}
	c.llama()
	c.cudaKernels()
	return c.out
}

type envCheck struct {
	env *pyenv.Env
	g   gpu.State
	o   Options
	out []finding.Finding
	fix string // cached fix command, "" when none
	did bool

	rep        kb.Repair // what a reinstall installs here (repair)
	repOK      bool
	repairDone bool
	gone       bool // torchGone reported
}

func (c *envCheck) add(code string, sev finding.Severity, msg string, fix string, ev []pyenv.Evidence) {
	c.out = append(c.out, finding.Finding{Code: code, Severity: sev, Message: msg, Fix: fix, Env: c.env.Path, Evidence: ev})
}

// reinstall is the command that reinstalls the right CUDA torch here, or
// "": none where the environment's interpreter cannot run it. Every code
// a torch reinstall fixes has the same command (the one plan).
func (c *envCheck) reinstall() string {
	if !c.did && runnable(c.env) {
		c.fix = c.o.Advice.Fix(c.env, c.g, finding.CodeTorchCPUBuild)
	}
	c.did = true
	return c.fix
}

// hasGPU is true when an NVIDIA GPU is present (simulated or real).
func (c *envCheck) hasGPU() bool { return c.g.HasDriver() && len(c.g.Devices) > 0 }

// gpuName names the machine's GPUs after "this machine has".
func (c *envCheck) gpuName() string {
	article := func(name string) string {
		if strings.HasPrefix(name, "NVIDIA") {
			return "an " + name
		}
		return "a " + name
	}
	switch len(c.g.Devices) {
	case 0:
		return "an NVIDIA GPU"
	case 1:
		return article(c.g.Devices[0].Name)
	}
	names := make([]string, len(c.g.Devices))
	for i, d := range c.g.Devices {
		names[i] = d.Name
	}
	return fmt.Sprintf("%d NVIDIA GPUs (%s)", len(names), strings.Join(names, ", "))
}

// problems reports what pyenv found wrong on disk. The environment's own
// problems (a pyvenv.cfg or .pth file that is a FIFO or too large, no
// site-packages folder, a stash pip left of a package not installed) are
// ENV_UNREADABLE, never TORCH_INSTALL_BROKEN: they are not torch's, and
// a reinstall of torch, that code's fix, would not touch them. One that
// keeps the environment from being read is an error, since nothing
// read from it can be trusted; the others a warning.
func (c *envCheck) problems() {
	for _, p := range c.env.Problems {
		if c.torchGone(p) {
			continue
		}
		code, sev, fixCmd := finding.CodeEnvUnreadable, finding.SeverityWarning, ""
		switch p.Kind {
		case pyenv.ProblemUnreadable, pyenv.ProblemTruncated:
			sev = finding.SeverityError
		case pyenv.ProblemInterpreterMissing:
			code, sev = finding.CodeEnvInterpreterMissing, finding.SeverityError
			fixCmd = c.o.Advice.Fix(c.env, c.g, code)
		case pyenv.ProblemPythonMismatch:
			code, sev = finding.CodeEnvPythonMismatch, finding.SeverityError
			fixCmd = c.o.Advice.Fix(c.env, c.g, code)
		}
		c.add(code, sev, p.Message, fixCmd, []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
	}
	for _, name := range sortedKeys(c.env.Packages) {
		for _, p := range c.env.Packages[name].Problems {
			if name != pyenv.Torch {
				c.packageProblem(name, p)
				continue
			}
			code, sev := finding.CodeTorchInstallBroken, finding.SeverityError
			fixCmd := ""
			if name == pyenv.Torch {
				fixCmd = c.reinstall()
			}
			switch {
			case p.Kind == pyenv.ProblemUnreadable:
				code = finding.CodeEnvUnreadable
			case p.Kind == pyenv.ProblemPipStash:
				sev = finding.SeverityWarning
			case p.Kind == pyenv.ProblemBuildMismatch:
				// The files are one build and agree with each other;
				// what is wrong is the metadata pip and uv decide by.
				// Files of two releases (ProblemMixedRelease) stay an
				// error: the compiled core and the Python code disagree.
				sev = finding.SeverityWarning
			case p.Kind == pyenv.ProblemRuntimeMismatch:
				// The library's soname is there, so import usually works:
				// a warning, not an error. An older library than torch
				// was built against can still fail ("undefined symbol"),
				// and a newer one may be what the user installed on
				// purpose for another framework; the fix puts torch's
				// own versions back. A missing one (ProblemMissingRuntime)
				// stays an error: import fails.
				sev = finding.SeverityWarning
			}
			c.add(code, sev, fmt.Sprintf("%s: %s", name, p.Message), fixCmd, []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
		}
	}
}

// packageProblem reports a fault in the files of a package other than
// torch (torchvision, bitsandbytes, llama-cpp-python) as
// PACKAGE_INSTALL_BROKEN, not TORCH_INSTALL_BROKEN: a script that filters
// on torch's code must not see it, and reinstalling torch is not its fix.
// It is an error when files the package loads are gone (import fails), a
// warning otherwise (metadata, a stash: it still loads); a file that
// cannot be read stays ENV_UNREADABLE.
func (c *envCheck) packageProblem(name string, p pyenv.Problem) {
	code, sev, fix := finding.CodePackageInstallBroken, finding.SeverityWarning, ""
	switch p.Kind {
	case pyenv.ProblemUnreadable:
		code, sev = finding.CodeEnvUnreadable, finding.SeverityError
	case pyenv.ProblemHalfDeleted:
		sev = finding.SeverityError
		if l := c.env.Packages[name]; name == pyenv.LlamaCppPython && c.hasGPU() && l.Version != "" && runnable(c.env) {
			fix = c.o.Advice.Fix(c.env, c.g, finding.CodeLlamaCPPCPUBuild) // a reinstall that also brings the CUDA backend
		}
	}
	c.add(code, sev, fmt.Sprintf("%s: %s", name, p.Message), fix, []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
}

func (c *envCheck) torch(t *pyenv.Package) {
	switch t.Build {
	case pyenv.BuildCPU:
		if c.hasGPU() {
			c.add(finding.CodeTorchCPUBuild, finding.SeverityError,
				fmt.Sprintf("torch %s is a CPU-only build, but this machine has %s: everything in this environment runs on the CPU.%s", t.Version, c.gpuName(), c.upgradeNote(t)),
				c.fixFor(finding.CodeTorchCPUBuild, finding.SeverityError, t), t.Evidence)
		} else {
			c.add(finding.CodeTorchCPUBuild, finding.SeverityInfo,
				fmt.Sprintf("torch %s is a CPU-only build (no NVIDIA GPU is present, so this is fine here).", t.Version), "", t.Evidence)
		}
	case pyenv.BuildROCm, pyenv.BuildXPU:
		c.otherVendor(t)
	case pyenv.BuildUnknown:
		c.add(finding.CodeTorchBuildUnknown, finding.SeverityWarning,
			fmt.Sprintf("torch %s is installed, but its files do not say which build it is (CUDA, CPU or ROCm).", t.Version), "", t.Evidence)
	case pyenv.BuildCUDA:
		c.cudaTorch(t)
	}
}

// otherVendor judges a ROCm (AMD) or XPU (Intel) build: it cannot use an
// NVIDIA GPU, so beside one it runs everything on the CPU.
func (c *envCheck) otherVendor(t *pyenv.Package) {
	what := "an XPU (Intel GPU)"
	if t.Build == pyenv.BuildROCm {
		what = "a ROCm (AMD GPU)"
	}
	if !c.hasGPU() {
		c.add(finding.CodeTorchNonNVIDIA, finding.SeverityInfo,
			fmt.Sprintf("torch %s is %s build; no NVIDIA GPU is present, and GPU Canary checks NVIDIA GPUs only.", t.Version, what), "", t.Evidence)
		return
	}
	c.add(finding.CodeTorchNonNVIDIA, finding.SeverityError,
		fmt.Sprintf("torch %s is %s build, but this machine has %s, which it cannot use: torch.cuda.is_available() is False and everything in this environment runs on the CPU.%s",
			t.Version, what, c.gpuName(), c.upgradeNote(t)),
		c.fixFor(finding.CodeTorchNonNVIDIA, finding.SeverityError, t), t.Evidence)
}

// repair is what a reinstall would install here, as the repair plan
// chooses it (kb.ChooseRepair), worked out once; ok is false when nothing
// is known to choose from or nothing runs here.
func (c *envCheck) repair(t *pyenv.Package) (kb.Repair, bool) {
	if !c.repairDone {
		c.repairDone = true
		if c.g.HasDriver() && kb.Judged(t.Version) {
			c.rep, c.repOK = kb.ChooseRepair(kb.PublicVersion(t.Version), kb.MachineOf(c.g))
		}
	}
	return c.rep, c.repOK
}

// fixFor is the reinstall command for a finding about torch, shown only
// when the build the reinstall installs clears it under these same rules:
// a build that still needs minor-version compatibility does not clear a
// warning about that, nor one that reaches a GPU only through PTX a
// warning about that.
func (c *envCheck) fixFor(code string, sev finding.Severity, t *pyenv.Package) string {
	cmd := c.reinstall()
	if cmd == "" {
		return ""
	}
	if c.env.AheadOfOwn(t) {
		// The repair removes this copy (monitor/fixplan): the one it hides
		// is judged then, not a build the repair chooses.
		if c.raisedWithout(t, code) >= sev.Rank() {
			return ""
		}
		return cmd
	}
	if r, ok := c.repair(t); ok && stillRaised(code, r.Check) >= sev.Rank() {
		return ""
	}
	return cmd
}

// stillRaised is the rank of the severity at which the rules would raise
// code about build b (0: not at all), for the codes that depend on the
// build's fit to the machine.
func stillRaised(code string, b kb.BuildCheck) int {
	switch {
	case code == finding.CodeDriverTooOld && b.Driver.Support == kb.SupportNo,
		code == finding.CodeGPUArchUnsupported && len(b.Unsupported()) > 0:
		return finding.SeverityError.Rank()
	case code == finding.CodeDriverTooOld && b.Driver.MinorCompat,
		code == finding.CodeGPUArchUnsupported && len(b.PTXOnly()) > 0:
		return finding.SeverityWarning.Rank()
	}
	return 0
}

// upgradeNote says what the fix installs when it is not a clean build of
// the installed release: a newer release (no build of this one runs on
// every GPU here), a build that still has faults the rules warn about, or
// nothing at all. "" when a clean build of the installed release runs
// here, or nothing is known to choose from.
func (c *envCheck) upgradeNote(t *pyenv.Package) string {
	if !c.g.HasDriver() || !kb.Judged(t.Version) {
		return ""
	}
	r, ok := c.repair(t)
	switch {
	case !ok:
		m := kb.MachineOf(c.g)
		driver := m.DriverCUDALabel()
		if driver == "" {
			driver = "CUDA version not known"
		}
		return fmt.Sprintf(" No torch release in GPU Canary's table has a CUDA build that runs on every GPU here (%s) with this driver (%s), so no command is proposed.",
			m.Describe(), driver)
	case r.Downgrade:
		return fmt.Sprintf(" No CUDA build of torch %s or of a newer release runs on every GPU here; the fix goes back to torch %s (%s): %s.",
			kb.PublicVersion(t.Version), r.Torch, r.Tag, r.Reason)
	case r.Upgrade:
		return fmt.Sprintf(" No CUDA build of torch %s runs on every GPU here with this driver; the oldest release that does is torch %s (%s), so the fix upgrades torch%s.",
			kb.PublicVersion(t.Version), r.Torch, r.Tag, c.companionNote(r.Choice))
	case !r.Check.Clean():
		return fmt.Sprintf(" The best build of torch %s for this machine, %s, still has faults: %s.", r.Torch, r.Tag, r.Check.Problems())
	}
	return ""
}

// companionNote names the companions an upgrade changes with torch.
func (c *envCheck) companionNote(next kb.Choice) string {
	var parts []string
	for _, comp := range []struct{ name, to string }{{pyenv.TorchVision, next.Vision}, {pyenv.TorchAudio, next.Audio}} {
		if p := c.env.Packages[comp.name]; p != nil && comp.to != "" {
			parts = append(parts, fmt.Sprintf("%s %s → %s", comp.name, kb.PublicVersion(p.Version), comp.to))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " and with it " + strings.Join(parts, ", ")
}

// family checks that torchvision and torchaudio match torch's version and variant.
func (c *envCheck) family(t *pyenv.Package) {
	public := kb.PublicVersion(t.Version)
	vision, audio, known := kb.Companions(public)
	for _, comp := range []struct{ name, want string }{{pyenv.TorchVision, vision}, {pyenv.TorchAudio, audio}} {
		p := c.env.Packages[comp.name]
		if p == nil {
			continue
		}
		ev := append(slices.Clone(t.Evidence), p.Evidence...)
		if known && comp.want != "" && kb.PublicVersion(p.Version) != comp.want {
			c.add(finding.CodeTorchFamilyMismatch, finding.SeverityError,
				fmt.Sprintf("%s %s does not belong with torch %s (it needs %s %s): importing it fails or its compiled operators are missing.", comp.name, p.Version, t.Version, comp.name, comp.want),
				c.reinstall(), ev)
			continue
		}
		if mismatch(t, p) {
			c.add(finding.CodeTorchFamilyMismatch, finding.SeverityError,
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
		c.add(finding.CodeBNBCUDAMismatch, finding.SeverityError,
			fmt.Sprintf("bitsandbytes %s has no CUDA library for %s (it ships CUDA %s, and none of the same major version at or below it): 8-bit and 4-bit layers will fail to load.", b.Version, why, shipped),
			"", b.Evidence)
		return
	}
	c.add(finding.CodeBNBCUDAMismatch, finding.SeverityError,
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

// llama reports a llama-cpp-python without a GPU backend. One with no
// library found is no CPU build: it does not load at all, or loads from
// where GPU Canary did not look, which packageProblem reports from the
// problem pyenv records (said here where there is none, never silence).
func (c *envCheck) llama() {
	l := c.env.Packages[pyenv.LlamaCppPython]
	if l == nil || slices.ContainsFunc(l.Problems, func(p pyenv.Problem) bool { return p.Kind == pyenv.ProblemHalfDeleted }) {
		return
	}
	if len(l.Backends) == 0 {
		if len(l.Problems) == 0 {
			c.add(finding.CodePackageInstallBroken, finding.SeverityWarning,
				fmt.Sprintf("llama-cpp-python %s: no libllama or ggml library was found, so which backends it has is not known.", l.Version), "", l.Evidence)
		}
		return
	}
	for _, b := range l.Backends {
		if b == "cuda" || b == "hip" || b == "vulkan" {
			return
		}
	}
	if !c.hasGPU() {
		c.add(finding.CodeLlamaCPPCPUBuild, finding.SeverityInfo,
			fmt.Sprintf("llama-cpp-python %s is built for the CPU only (no NVIDIA GPU is present, so this is fine here).", l.Version), "", l.Evidence)
		return
	}
	fixCmd := ""
	if runnable(c.env) {
		fixCmd = c.o.Advice.Fix(c.env, c.g, finding.CodeLlamaCPPCPUBuild)
	}
	c.add(finding.CodeLlamaCPPCPUBuild, finding.SeverityError,
		fmt.Sprintf("llama-cpp-python %s has no CUDA backend: every layer runs on the CPU, whatever n_gpu_layers says, although this machine has %s.", l.Version, c.gpuName()),
		fixCmd, l.Evidence)
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
