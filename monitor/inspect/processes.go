package inspect

import (
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Processes classifies one scan against the GPU and the known
// environments, the mapped CUDA libraries' kernels read through kernels
// (the caller's cache; nil reads them every time); tracker is nil for a one-shot view. running (procs.HostPIDs)
// says whether a PID the driver lists runs, nil where this view cannot
// tell: the same answer GPU_MEMORY_ORPHANED is judged by
// (health.CheckGPUMemory), so that a PID it calls gone is an orphaned
// row, not a job.
func Processes(ps []procs.Proc, g gpu.State, envs map[string]*pyenv.Env, kernels *fatbin.Cache, rule procs.BusyRule, tracker *procs.BusyTracker, now time.Time, running func(pid int) bool) []monitor.Process {
	rows := procs.Classify(ps, g, envs, kernels, rule, tracker, now, running)
	out := make([]monitor.Process, len(rows))
	for i, r := range rows {
		fs := health.CheckProcess(r)
		if fs == nil {
			fs = []finding.Finding{}
		}
		out[i] = monitor.Process{Row: r, Findings: fs}
	}
	return out
}
