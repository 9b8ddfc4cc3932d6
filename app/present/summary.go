package present

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Summary is the one-line status of the engine's state a person reads in
// a tooltip or a report: GPUs, jobs on the GPU (and stuck on the CPU),
// environments, broken ones, and whether the environment search was cut
// short: "2 GPUs · 3 jobs on GPU · 1 env broken · search incomplete".
func Summary(s monitor.State) string {
	var parts []string
	switch n := len(s.GPU.Devices); {
	case !s.GPU.HasDriver():
		parts = append(parts, "no NVIDIA driver")
	case n == 1:
		parts = append(parts, "1 GPU")
	default:
		parts = append(parts, fmt.Sprintf("%d GPUs", n))
	}
	if s.GPU.Simulated {
		parts[0] += " (simulated)"
	}
	if s.GPU.WSL {
		parts[0] += " (WSL)"
	}
	var onGPU, offGPU int
	for _, p := range s.Processes {
		switch {
		case p.Job():
			onGPU++
		case p.JobOnCPU:
			offGPU++
		}
	}
	if onGPU > 0 || len(s.Processes) > 0 {
		parts = append(parts, count(onGPU, "job on GPU", "jobs on GPU"))
	}
	if offGPU > 0 {
		parts = append(parts, count(offGPU, "job on CPU", "jobs on CPU"))
	}
	var broken, warn int
	for _, e := range s.Envs {
		switch e.Verdict {
		case monitor.VerdictError:
			broken++
		case monitor.VerdictWarning:
			warn++
		}
	}
	parts = append(parts, count(len(s.Envs), "env", "envs"))
	if broken > 0 {
		parts = append(parts, count(broken, "env broken", "envs broken"))
	}
	if warn > 0 {
		parts = append(parts, count(warn, "warning", "warnings"))
	}
	if s.SearchStopped != "" {
		parts = append(parts, "search incomplete")
	}
	return strings.Join(parts, " · ")
}

// Jobs counts the processes of rows by what they do: jobs on the GPU
// (holding GPU memory; graphics processes, a compositor or a display
// server, are not jobs), ML processes computing on the CPU (verdict cpu
// or cuda-idle: a GPU workload they are not), and the rest (graphics
// processes, and ML runtimes of which nothing can be said).
type Jobs struct{ OnGPU, OnCPU, Other int }

// CountJobs counts rows for a report or a summary.
func CountJobs(rows []monitor.Process) Jobs {
	var j Jobs
	for _, r := range rows {
		switch {
		case r.Job():
			j.OnGPU++
		case r.Verdict == procs.VerdictCPU || r.Verdict == procs.VerdictCUDAIdle:
			j.OnCPU++
		default:
			j.Other++
		}
	}
	return j
}

// String is "2 jobs on the GPU, 1 ML process on the CPU".
func (j Jobs) String() string {
	s := count(j.OnGPU, "job on the GPU", "jobs on the GPU")
	if j.OnCPU > 0 {
		s += ", " + count(j.OnCPU, "ML process on the CPU", "ML processes on the CPU")
	}
	return s
}

// CheckSummary is Summary for a one-shot check (no processes).
func CheckSummary(r monitor.CheckResult) string {
	stopped := r.SearchStopped
	if !r.Complete && stopped == "" {
		stopped = "the search was cut short"
	}
	return Summary(monitor.State{GPU: r.GPU, Envs: r.Envs, SearchStopped: stopped})
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
