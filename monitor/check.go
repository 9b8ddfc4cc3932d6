// Package monitor holds what every part of GPU Canary shares about the
// machine: the engine's State, an environment's report (EnvReport) with
// its typed Verdict, the Events the live engine publishes (with their
// typed Kind and Culprit), processes with their findings, and the one-shot
// Check that `gpucanary check` runs. The live engine is monitor/engine;
// display text is app/present. It never imports a GUI toolkit.
package monitor

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Verdict is what the rules make of one environment, from its worst
// finding (stable: `check --json` prints it and scripts match it).
type Verdict string

// Verdicts of an environment, worst finding first.
const (
	VerdictOK      Verdict = "ok"
	VerdictWarning Verdict = "warning"
	VerdictError   Verdict = "error"
	VerdictNoTorch Verdict = "no-torch"
)

// EnvReport is one environment with what the rules found in it. It embeds
// the environment so its JSON carries the fields of DESIGN.md's `envs`.
type EnvReport struct {
	*pyenv.Env
	// Via says how the environment was found ("argument", "home", ...).
	Via string `json:"found_via,omitempty"`
	// From says what pointed there: a manager's config or default
	// folder, a kernel.json, or how a path argument was resolved
	// ("./ → ./.venv (uv project)").
	From     string            `json:"found_from,omitempty"`
	Verdict  Verdict           `json:"verdict"`
	Findings []finding.Finding `json:"findings"`
	// Guarded is true when `gpucanary guard` keeps the environment's
	// torch and its files are as it wrote them; GuardChanged names those
	// removed or edited by hand since (monitor/guard). The command line
	// and the engine fill them from the state folder.
	Guarded      bool     `json:"guarded,omitempty"`
	GuardChanged []string `json:"guard_changed,omitempty"`

	// OutOfFiles is true when, during the read, the process had no file
	// descriptor left for a file it opened (EMFILE, ENFILE: a flood of
	// connections to the agent, say): the report may say files are
	// missing or unreadable that are there. It is the process's fault,
	// not the environment's; the engine keeps its last good reading and
	// reads it again.
	OutOfFiles bool `json:"-"`

	// uvProject is what the uv project around the environment said when it
	// was read, so its findings, which depend on the GPU, can be judged
	// again for another GPU without reading the disk (UVFindings).
	uvProject *uvproject.LockInfo
}

// CheckResult is the whole answer of `gpucanary check`.
type CheckResult struct {
	GPU  gpu.State   `json:"gpu"`
	Envs []EnvReport `json:"envs"`
	// Findings are about the machine, not one environment (NO_GPU_DRIVER).
	Findings []finding.Finding `json:"findings"`
	// Complete is false when the environment search was cut short by its
	// budget: an environment missing from Envs may still be there.
	Complete bool `json:"complete"`
	// SearchStopped says what cut the search short, when it was.
	SearchStopped string `json:"search_stopped,omitempty"`
}

// HasErrors reports whether any finding is an error; `check` exits 1 then.
func (r CheckResult) HasErrors() bool {
	if finding.Worst(r.Findings) == finding.SeverityError {
		return true
	}
	for _, e := range r.Envs {
		if e.Verdict == VerdictError {
			return true
		}
	}
	return false
}

// Check inspects every environment in found against the GPU state g and
// evaluates the rules. Environments are read concurrently (InspectEach),
// each under its deadline; the result is in the order of found. The
// result says the search was complete; a caller whose search was cut
// short (pyenv.Discovery) sets Complete and SearchStopped.
func Check(ctx context.Context, g gpu.State, found []pyenv.Found, o health.Options) CheckResult {
	g = AnnotateGPU(g)
	res := CheckResult{GPU: g, Envs: make([]EnvReport, len(found)), Findings: health.CheckGPU(g), Complete: true}
	if res.Findings == nil {
		res.Findings = []finding.Finding{}
	}
	read := func(ctx context.Context, f pyenv.Found) EnvReport { return InspectOne(ctx, f, g, o) }
	InspectEach(ctx, found, read, func(i int, rep EnvReport) bool {
		res.Envs[i] = rep
		return true
	})
	return res
}

// InspectOne reads one environment and evaluates the rules on it. An
// environment that cannot be read is a report with ENV_UNREADABLE.
func InspectOne(ctx context.Context, f pyenv.Found, g gpu.State, o health.Options) EnvReport {
	before := safefs.OutOfFiles()
	rep := inspectOne(ctx, f, g, o)
	rep.OutOfFiles = rep.OutOfFiles || safefs.OutOfFiles() != before
	return rep
}

// inspectOne is InspectOne without the watch on file descriptors.
func inspectOne(ctx context.Context, f pyenv.Found, g gpu.State, o health.Options) EnvReport {
	if err := ctx.Err(); err != nil {
		return Unreadable(f, err)
	}
	if f.Create != "" {
		return notCreated(f)
	}
	if f.Missing != "" {
		return kernelGone(f)
	}
	env, err := inspectBounded(ctx, f.Path)
	if err != nil {
		rep := Unreadable(f, err)
		rep.OutOfFiles = safefs.IsOutOfFiles(err)
		return rep
	}
	fs := DistroJudged(env, f.Via, health.CheckEnv(env, g, WithFixCommands(o)))
	var uv *uvproject.LockInfo
	if p, ok := uvproject.FindProject(env.Path); ok && env.Torch() != nil {
		if info, err := uvproject.ReadProject(p); err == nil {
			uv = &info
			fs = append(fs, health.CheckUVProject(env, info, g)...)
		} else {
			fs = append(fs, finding.Finding{Code: finding.CodeUVWillReplaceTorch, Severity: finding.SeverityInfo, Env: env.Path,
				Message: fmt.Sprintf("The uv project beside this environment could not be read, so GPU Canary cannot tell whether `uv sync` would replace torch: %v.", err)})
		}
	}
	SortFindings(fs)
	if fs == nil {
		fs = []finding.Finding{}
	}
	return EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: VerdictOf(env, fs), Findings: fs, uvProject: uv}
}

// UVFindings are the findings about the uv project around the
// environment judged again for the GPU g, from what the project said when
// the environment was read (whether the torch its lock installs runs
// depends on the GPU); ok is false when there was no project read, and
// the findings of the report (one saying it could not be read) stand.
func (r EnvReport) UVFindings(g gpu.State) (fs []finding.Finding, ok bool) {
	if r.uvProject == nil || r.Env == nil {
		return nil, false
	}
	return health.CheckUVProject(r.Env, *r.uvProject, g), true
}

// WithFixCommands gives the rules fix's planner for their fix commands
// (from the official index) when the caller gave none: Check and the live
// engine use it, so a finding a reinstall fixes always shows the command.
func WithFixCommands(o health.Options) health.Options {
	if o.Reinstall == nil {
		o.Reinstall = fix.Advice{}.Reinstall
	}
	return o
}

// Unreadable is the report of an environment that could not be read, or
// of a path that names none: its one finding, ENV_UNREADABLE, says why
// (err's text follows "could not be read: "). Its packages are unknown
// (nil, null in JSON), not "torch is not installed".
func Unreadable(f pyenv.Found, err error) EnvReport {
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown}
	return EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: VerdictError, Findings: []finding.Finding{health.Unreadable(f.Path, err)}}
}

// notCreated is the report on a project folder whose environment does
// not exist yet: nothing to read, a finding that says how to create it.
func notCreated(f pyenv.Found) EnvReport {
	// Nothing was read: its packages are unknown (null), not "none".
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown}
	fs := []finding.Finding{health.NotCreated(f.Path, f.From, f.Create)}
	return EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: VerdictOf(env, fs), Findings: fs}
}

// kernelGone is the report on where a Jupyter kernel's environment was,
// when the interpreter its kernel.json names does not exist: nothing to
// read, a finding that says the kernel cannot start.
func kernelGone(f pyenv.Found) EnvReport {
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown}
	fs := []finding.Finding{health.KernelGone(f.Path, f.From, f.Missing)}
	return EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: VerdictOf(env, fs), Findings: fs}
}

// VerdictOf is env's verdict given its findings fs.
func VerdictOf(env *pyenv.Env, fs []finding.Finding) Verdict {
	switch finding.Worst(fs) {
	case finding.SeverityError:
		return VerdictError
	case finding.SeverityWarning:
		return VerdictWarning
	}
	if env.Torch() == nil {
		return VerdictNoTorch
	}
	return VerdictOK
}

// SortFindings puts errors first, then warnings, then info, keeping the
// rules' order within a severity: the order reports and views show.
func SortFindings(fs []finding.Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
}

// AnnotateGPU fills in what kb knows about each device (its
// architecture), on a copy of g's devices, and the CUDA version derived
// from the driver's version when the driver did not give its own.
func AnnotateGPU(g gpu.State) gpu.State {
	if m := kb.MachineOf(g); m.DriverCUDAFrom != "" {
		g.CUDADriverDerived = m.DriverCUDA
	}
	g.Devices = slices.Clone(g.Devices)
	for i := range g.Devices {
		if a, ok := kb.Architecture(g.Devices[i].ComputeCapability); ok {
			g.Devices[i].Architecture = a
		}
	}
	return g
}
