package health

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// CheckUVProject raises UV_WILL_REPLACE_TORCH when the uv project around
// env would put a torch worse here in place of its CUDA one at the next
// `uv sync` or `uv run`, before it happens: a CPU build (incident 1), or
// a CUDA build that has no kernels for a GPU of g or needs a newer driver
// (incident 4: PyPI's cu126 wheel of torch 2.7 over a cu128 one on a
// Blackwell GPU), an error when it cannot run here at all.
func CheckUVProject(env *pyenv.Env, info uvproject.LockInfo, g gpu.State) []finding.Finding {
	t := env.Torch()
	if t == nil {
		return nil
	}
	platform := "linux"
	if env.Layout == pyenv.LayoutWindows {
		platform = "windows"
	}
	evidence := info.Project.Lock
	if evidence == "" {
		evidence = info.Project.Pyproject
	}
	var out []finding.Finding
	for _, r := range uvproject.WillReplaceTorch(info, platform, t.Build == pyenv.BuildCUDA, lockJudge(t, g)) {
		sev := finding.SeverityWarning
		if r.CannotRun {
			sev = finding.SeverityError
		}
		f := finding.Finding{Code: finding.CodeUVWillReplaceTorch, Severity: sev, Env: env.Path,
			Message:  "torch " + t.Version + " is a CUDA build, but " + r.Reason + ". Pin torch to its CUDA index in " + info.Project.Pyproject + ".",
			Fix:      "gpucanary fix --pin-index " + shell.Quote(env.Path),
			Evidence: []pyenv.Evidence{{File: evidence, Says: r.Reason}}}
		switch {
		case r.PinnedThere:
			// fix --pin-index does not overwrite a pin the user made.
			f.Message = "torch " + t.Version + " is a CUDA build, but " + r.Reason + ". Send torch to a CUDA index whose build runs here in " + info.Project.Pyproject + ", then run `uv lock`."
			f.Fix = ""
		case r.LockStale:
			// The pin is there already: pinning again changes nothing.
			f.Message = "torch " + t.Version + " is a CUDA build, but " + r.Reason + " in " + info.Project.Dir + "."
			f.Fix = ""
		}
		out = append(out, f)
	}
	return out
}

// lockJudge judges a CUDA build uv.lock installs as the rules judge an
// installed one (kb.CheckBuild on kb.MachineOf), against the torch
// installed: a build with a fault the installed one does not have is
// worse. Without a driver nothing is judged.
func lockJudge(t *pyenv.Package, g gpu.State) uvproject.Judge {
	if !g.HasDriver() {
		return nil
	}
	m := kb.MachineOf(g)
	installed := fault(kb.CheckBuild(t.Version, t.CUDA, m))
	return func(l uvproject.LockedCUDA) (string, bool) {
		what, cuda, sure := lockedBuild(l)
		if cuda == "" {
			return "", false
		}
		b := kb.CheckBuild(l.Version, cuda, m)
		switch f := fault(b); {
		case f <= installed:
			return "", false
		case f == faultCannotRun:
			return what + " that cannot run here: " + b.Problems(), sure
		}
		return what + " that runs here only with faults the installed one does not have: " + b.Problems(), false
	}
}

// lockedBuild names a locked CUDA build ("a CUDA 12.6 build (cu126)") and
// its CUDA version, "" when it is not known; sure is false when the CUDA
// version of PyPI's wheel of the release is inferred, not read from one.
func lockedBuild(l uvproject.LockedCUDA) (what, cuda string, sure bool) {
	if l.Tag != "" {
		cuda, ok := kb.CUDAForTag(l.Tag)
		if !ok {
			return "", "", false
		}
		return fmt.Sprintf("a CUDA %s build (%s)", cuda, l.Tag), cuda, true
	}
	cuda, ok := kb.DefaultCUDA(l.Version, l.Platform)
	r, known := kb.ReleaseFor(l.Version)
	if !ok || !known || cuda == "" {
		return "", "", false
	}
	// Only Linux's PyPI wheels are CUDA builds (kb.DefaultCUDA).
	what = fmt.Sprintf("a CUDA %s build (%s: PyPI's Linux wheels of torch %s are)", cuda, kb.TagForCUDA(cuda), r.Minor)
	if r.PyPIUnverified {
		what = fmt.Sprintf("most likely a CUDA %s build (%s: PyPI's Linux wheels of torch %s are thought to be, not verified)", cuda, kb.TagForCUDA(cuda), r.Minor)
	}
	return what, cuda, !r.PyPIUnverified
}

// Faults of a build on a machine, worst last.
const (
	faultNone      = iota
	faultDegraded  // runs, through minor-version compatibility or PTX, or the driver could not confirm it
	faultCannotRun // the driver is too old for it, or a GPU has no kernels in it
)

// fault is how badly a build fits the machine, as the rules grade it:
// what they raise as an error cannot run; what they warn about is
// degraded. What could not be checked is no fault.
func fault(b kb.BuildCheck) int {
	switch {
	case b.Driver.Support == kb.SupportNo || len(b.Unsupported()) > 0:
		return faultCannotRun
	case b.Driver.MinorCompat || b.Driver.Unconfirmed || len(b.PTXOnly()) > 0:
		return faultDegraded
	}
	return faultNone
}
