package monitor

import (
	"maps"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/jobend"
)

// State is everything the engine currently knows.
type State struct {
	GPU       gpu.State   `json:"gpu"`
	Envs      []EnvReport `json:"envs"`
	Processes []Process   `json:"processes"`
	// Findings are about the machine or the engine itself
	// (NO_GPU_DRIVER, WATCH_DEGRADED).
	Findings []finding.Finding `json:"findings"`
	// Started is false until the first full read is done.
	Started bool `json:"started"`
	// DiscoveryComplete is false when the last search for environments
	// was cut short (a time limit): an environment may be missing.
	DiscoveryComplete bool `json:"discovery_complete"`
	// LastRead is when the last full read of every environment (at start
	// and at each rediscovery) ended; LastReadDuration is how long it took.
	LastRead         time.Time     `json:"last_read,omitzero"`
	LastReadDuration time.Duration `json:"last_read_duration_ns,omitempty"`
	// Polled is when the GPU and processes were last polled: a value that
	// stops moving means the engine's loop is stuck (a hung driver call).
	Polled time.Time `json:"polled,omitzero"`
	// TorchChanges are, by environment path, when torch last changed and
	// when a CUDA torch was last replaced (TorchChange).
	TorchChanges map[string]TorchChange `json:"torch_changes,omitempty"`
	// SearchStopped says what cut the last environment search short
	// (its time or entry budget); "" when it looked everywhere.
	SearchStopped string `json:"search_stopped,omitempty"`
	// JobsEnded counts the JOB_ENDED events since the engine started, by
	// how the job ended (finished, crashed, unknown); nil before the
	// engine's first read. Replaced, never changed in place: copies of
	// the state share it.
	JobsEnded map[jobend.How]uint64 `json:"jobs_ended,omitempty"`
	// Jobs are the GPU jobs running now, oldest first; JobMarks the
	// newest moments of jobs' lives (started, ended, stalled), oldest
	// first, at most JobMarksKept. Both are replaced, never changed in
	// place.
	Jobs     []JobRun  `json:"jobs,omitempty"`
	JobMarks []JobMark `json:"job_marks,omitempty"`
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
	s.TorchChanges = maps.Clone(s.TorchChanges)
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
