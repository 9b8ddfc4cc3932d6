package monitor

import (
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Process is one row of `gpucanary ps` with the findings about it.
type Process struct {
	procs.Row
	Findings []health.Finding `json:"findings"`
}

// Processes classifies one scan against the GPU and the known
// environments; tracker is nil for a one-shot view.
func Processes(ps []procs.Proc, g gpu.State, envs map[string]*pyenv.Env, rule procs.BusyRule, tracker *procs.BusyTracker, now time.Time) []Process {
	rows := procs.Classify(ps, g, envs, rule, tracker, now)
	out := make([]Process, len(rows))
	for i, r := range rows {
		fs := health.CheckProcess(r)
		if fs == nil {
			fs = []health.Finding{}
		}
		out[i] = Process{Row: r, Findings: fs}
	}
	return out
}
