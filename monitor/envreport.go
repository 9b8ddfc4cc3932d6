// Package monitor holds what every part of GPU Canary shares about the
// machine: the engine's State, an environment's report (EnvReport) with
// its typed Verdict, `check`'s CheckResult, the Events the live engine
// publishes (with their typed Kind and Culprit), and processes with their
// findings. It runs nothing: the one-shot check is monitor/inspect, the
// live engine monitor/engine, the rules monitor/health, display text
// app/present. It never imports a GUI toolkit, the rules, the repair or
// the engine, so a view of its types needs none of them.
package monitor

import (
	"sort"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
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

	// UVProject is what the uv project around the environment said when
	// it was read, nil when there was none or it could not be read, so
	// its findings, which depend on the GPU, can be judged again for
	// another GPU without reading the disk (inspect.Rejudge).
	UVProject *uvproject.LockInfo `json:"-"`
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
