// Package monitor is GPU Canary's engine: it reads environments, the GPU and
// processes, evaluates the health rules, and (for the live engine) publishes
// events to subscribers. It never imports a GUI toolkit; the tray and the
// command line are both views of what it computes.
package monitor

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fix/uvproject"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Verdicts of an environment, worst finding first.
const (
	VerdictOK      = "ok"
	VerdictWarning = "warning"
	VerdictError   = "error"
	VerdictNoTorch = "no-torch"
)

// EnvReport is one environment with what the rules found in it. It embeds
// the environment so its JSON carries the fields of DESIGN.md's `envs`.
type EnvReport struct {
	*pyenv.Env
	// Via says how the environment was found ("argument", "home", ...).
	Via      string           `json:"found_via,omitempty"`
	Verdict  string           `json:"verdict"`
	Findings []health.Finding `json:"findings"`
}

// CheckResult is the whole answer of `gpucanary check`.
type CheckResult struct {
	GPU  gpu.State   `json:"gpu"`
	Envs []EnvReport `json:"envs"`
	// Findings are about the machine, not one environment (NO_GPU_DRIVER).
	Findings []health.Finding `json:"findings"`
}

// HasErrors reports whether any finding is an error; `check` exits 1 then.
func (r CheckResult) HasErrors() bool {
	if health.Worst(r.Findings) == health.SeverityError {
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
// evaluates the rules. Environments are read in parallel; the result is in
// the order of found.
func Check(ctx context.Context, g gpu.State, found []pyenv.Found, o health.Options) CheckResult {
	annotate(&g)
	res := CheckResult{GPU: g, Envs: make([]EnvReport, len(found)), Findings: health.CheckGPU(g)}
	if res.Findings == nil {
		res.Findings = []health.Finding{}
	}
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, f := range found {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res.Envs[i] = InspectOne(ctx, f, g, o)
		}()
	}
	wg.Wait()
	return res
}

// InspectOne reads one environment and evaluates the rules on it. An
// environment that cannot be read is a report with ENV_UNREADABLE.
func InspectOne(ctx context.Context, f pyenv.Found, g gpu.State, o health.Options) EnvReport {
	if err := ctx.Err(); err != nil {
		return unreadable(f, err)
	}
	env, err := pyenv.Inspect(f.Path)
	if err != nil {
		return unreadable(f, err)
	}
	fs := health.CheckEnv(env, g, WithFixCommands(o))
	if p, ok := uvproject.FindProject(env.Path); ok && env.Torch() != nil {
		if info, err := uvproject.ReadProject(p); err == nil {
			fs = append(fs, health.CheckUVProject(env, info)...)
		} else {
			fs = append(fs, health.Finding{Code: health.CodeUVWillReplaceTorch, Severity: health.SeverityInfo, Env: env.Path,
				Message: fmt.Sprintf("The uv project beside this environment could not be read, so GPU Canary cannot tell whether `uv sync` would replace torch: %v.", err)})
		}
	}
	sortFindings(fs)
	if fs == nil {
		fs = []health.Finding{}
	}
	return EnvReport{Env: env, Via: f.Via, Verdict: verdict(env, fs), Findings: fs}
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

func unreadable(f pyenv.Found, err error) EnvReport {
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown, Packages: map[string]*pyenv.Package{}}
	return EnvReport{Env: env, Via: f.Via, Verdict: VerdictError, Findings: []health.Finding{health.Unreadable(f.Path, err)}}
}

func verdict(env *pyenv.Env, fs []health.Finding) string {
	switch health.Worst(fs) {
	case health.SeverityError:
		return VerdictError
	case health.SeverityWarning:
		return VerdictWarning
	}
	if env.Torch() == nil {
		return VerdictNoTorch
	}
	return VerdictOK
}

// sortFindings puts errors first, then warnings, then info, keeping the
// rules' order within a severity.
func sortFindings(fs []health.Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
}

// annotate fills what kb knows about each device (its architecture).
func annotate(g *gpu.State) {
	g.Devices = slices.Clone(g.Devices)
	for i := range g.Devices {
		if a, ok := kb.Architecture(g.Devices[i].ComputeCapability); ok {
			g.Devices[i].Architecture = a
		}
	}
}
