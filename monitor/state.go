package monitor

import (
	"slices"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
)

// State is everything the engine currently knows.
type State struct {
	GPU       gpu.State   `json:"gpu"`
	Envs      []EnvReport `json:"envs"`
	Processes []Process   `json:"processes"`
	// Findings are about the machine or the engine itself
	// (NO_GPU_DRIVER, WATCH_DEGRADED).
	Findings []health.Finding `json:"findings"`
	// Started is false until the first full read is done.
	Started bool `json:"started"`
	// SearchStopped says what cut the last environment search short
	// (its time or entry budget); "" when it looked everywhere.
	SearchStopped string `json:"search_stopped,omitempty"`
}

// Check is the state in `check`'s shape, for views that show both.
func (s State) Check() CheckResult {
	return CheckResult{GPU: s.GPU, Envs: s.Envs, Findings: s.Findings, Complete: s.SearchStopped == "", SearchStopped: s.SearchStopped}
}

// Clone copies the state's lists, so the copy can be kept while the
// original is replaced.
func (s State) Clone() State {
	s.Envs = slices.Clone(s.Envs)
	s.Processes = slices.Clone(s.Processes)
	s.Findings = slices.Clone(s.Findings)
	return s
}

// Overall is the one state a status light shows (the tray's icon).
type Overall string

// Overall states of the machine. The order of the checks in
// CheckResult.Overall is the precedence: a broken environment outranks a
// missing driver, which outranks a simulated GPU.
const (
	OverallHealthy   Overall = "healthy"
	OverallWarning   Overall = "warning"
	OverallError     Overall = "error"
	OverallNoDriver  Overall = "nodriver"
	OverallSimulated Overall = "simulated"
)

// Overall is the one state a status light shows for r.
func (r CheckResult) Overall() Overall {
	var worst Overall
	for _, e := range r.Envs {
		switch e.Verdict {
		case VerdictError:
			return OverallError
		case VerdictWarning:
			worst = OverallWarning
		}
	}
	switch {
	case worst != "":
		return worst
	case !r.GPU.HasDriver():
		return OverallNoDriver
	case r.GPU.Simulated:
		return OverallSimulated
	}
	return OverallHealthy
}
