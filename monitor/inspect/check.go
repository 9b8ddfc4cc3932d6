// Package inspect is the one-shot check: it reads each environment under
// a deadline, several at once (InspectEach, which the live engine's reads
// share), so that a hung file system holds nothing but its own read, and
// judges it with the rules (monitor/health); it classifies a scan of the
// processes the same way (Processes). `check`, `ps`, `report` and the
// engine run it; its answers are monitor's shared types, which import
// none of this.
package inspect

import (
	"context"
	"fmt"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Check inspects every environment in found, read by rd (nil: the real
// disk, nothing kept), against the GPU state g and evaluates the rules.
// Environments are read concurrently (InspectEach), each under its
// deadline; the result is in the order of found. The result says the
// search was complete; a caller whose search was cut short
// (envsearch.Discovery) sets Complete and SearchStopped.
func Check(ctx context.Context, rd *pyenv.Reader, g gpu.State, found []envsearch.Found, o health.Options) monitor.CheckResult {
	res := Start(g)
	res.Envs = make([]monitor.EnvReport, len(found))
	read := func(ctx context.Context, f envsearch.Found) monitor.EnvReport {
		return InspectOne(ctx, rd, f, res.GPU, o)
	}
	InspectEach(ctx, found, read, func(i int, rep monitor.EnvReport) bool {
		res.Envs[i] = rep
		return true
	})
	return res
}

// Start is a check's result before its environments are read: the GPU
// described (kb.Annotate) and judged, no environments yet, complete. A
// caller that hands each report on as it is read (`check --json`) reads
// them with InspectOne against its GPU, as Check does.
func Start(g gpu.State) monitor.CheckResult {
	g = kb.Annotate(g)
	res := monitor.CheckResult{GPU: g, Findings: append(health.CheckGPU(g), health.CheckGPUHealth(g)...), Complete: true}
	if res.Findings == nil {
		res.Findings = []finding.Finding{}
	}
	return res
}

// InspectOne reads one environment with rd (nil: the real disk, nothing
// kept) and evaluates the rules on it. An environment that cannot be
// read is a report with ENV_UNREADABLE; one read while the process had
// no file descriptor left says so (OutOfFiles), to be read again.
func InspectOne(ctx context.Context, rd *pyenv.Reader, f envsearch.Found, g gpu.State, o health.Options) monitor.EnvReport {
	before := safefs.OutOfFiles()
	rep := inspectOne(ctx, rd, f, g, o)
	rep.OutOfFiles = rep.OutOfFiles || safefs.OutOfFiles() != before
	return rep
}

// inspectOne is InspectOne without the watch on file descriptors.
func inspectOne(ctx context.Context, rd *pyenv.Reader, f envsearch.Found, g gpu.State, o health.Options) monitor.EnvReport {
	if err := ctx.Err(); err != nil {
		return Unreadable(f, err)
	}
	if f.Create != "" {
		return notCreated(f)
	}
	if f.Missing != "" {
		return kernelGone(f)
	}
	env, err := inspectBounded(ctx, rd, f.Path, pyenv.InspectOptions{})
	if err != nil {
		rep := Unreadable(f, err)
		rep.OutOfFiles = safefs.IsOutOfFiles(err)
		return rep
	}
	fs := distroJudged(rd, env, f.Via, health.CheckEnv(env, g, o))
	var uv *uvproject.LockInfo
	if p, ok := findProject(ctx, rd, env); ok {
		if info, err := uvproject.ReadProjectOn(readerDisk(rd), p); err == nil {
			uv = &info
			fs = append(fs, health.CheckUVProject(env, info, g)...)
		} else {
			fs = append(fs, finding.Finding{Code: finding.CodeUVWillReplaceTorch, Severity: finding.SeverityInfo, Env: env.Path,
				Message: fmt.Sprintf("The uv project beside this environment could not be read, so GPU Canary cannot tell whether `uv sync` would replace torch: %v.", err)})
		}
	}
	monitor.SortFindings(fs)
	if fs == nil {
		fs = []finding.Finding{}
	}
	return monitor.EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: monitor.VerdictOf(env, fs), Findings: fs, UVProject: uv}
}

// findProject is the uv project of an environment with torch (the
// project's lock can replace torch), looked for on rd's disk, with the
// pass's Finder when there is one (Each).
func findProject(ctx context.Context, rd *pyenv.Reader, env *pyenv.Env) (uvproject.Project, bool) {
	if env.Torch() == nil {
		return uvproject.Project{}, false
	}
	return uvproject.FinderFrom(ctx).FindOn(readerDisk(rd), env.Path)
}

// readerDisk is the disk rd reads: a uv project is read from the disk
// its environment was.
func readerDisk(rd *pyenv.Reader) pyenv.Disk {
	if rd == nil || rd.Disk == nil {
		return pyenv.RealDisk
	}
	return rd.Disk
}

// Rejudge evaluates the rules on rep's environment again for the GPU g,
// from what was read of it, without reading the disk: its uv project's
// findings included (whether the torch its lock installs runs depends on
// the GPU), from what the project said when it was read; a uv project
// that could not be read keeps its finding as it was. The findings are
// sorted as Check sorts them.
func Rejudge(rep monitor.EnvReport, g gpu.State, o health.Options) []finding.Finding {
	fs := DistroJudged(rep.Env, rep.Via, health.CheckEnv(rep.Env, g, o))
	if rep.UVProject != nil {
		fs = append(fs, health.CheckUVProject(rep.Env, *rep.UVProject, g)...)
	} else {
		for _, f := range rep.Findings {
			if f.Code == finding.CodeUVWillReplaceTorch {
				fs = append(fs, f)
			}
		}
	}
	monitor.SortFindings(fs)
	return fs
}

// Unreadable is the report of an environment that could not be read, or
// of a path that names none: its one finding, ENV_UNREADABLE, says why
// (err's text follows "could not be read: "). Its packages are unknown
// (nil, null in JSON), not "torch is not installed".
func Unreadable(f envsearch.Found, err error) monitor.EnvReport {
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown}
	return monitor.EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: monitor.VerdictError, Findings: []finding.Finding{health.Unreadable(f.Path, err)}}
}

// notCreated is the report on a project folder whose environment does
// not exist yet: nothing to read, a finding that says how to create it.
func notCreated(f envsearch.Found) monitor.EnvReport {
	// Nothing was read: its packages are unknown (null), not "none".
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown}
	fs := []finding.Finding{health.NotCreated(f.Path, f.From, f.Create)}
	return monitor.EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: monitor.VerdictOf(env, fs), Findings: fs}
}

// kernelGone is the report on where a Jupyter kernel's environment was,
// when the interpreter its kernel.json names does not exist: nothing to
// read, a finding that says the kernel cannot start.
func kernelGone(f envsearch.Found) monitor.EnvReport {
	env := &pyenv.Env{Path: f.Path, Layout: pyenv.LayoutPOSIX, Installer: pyenv.InstallerUnknown}
	fs := []finding.Finding{health.KernelGone(f.Path, f.From, f.Missing)}
	return monitor.EnvReport{Env: env, Via: f.Via, From: f.From, Verdict: monitor.VerdictOf(env, fs), Findings: fs}
}
