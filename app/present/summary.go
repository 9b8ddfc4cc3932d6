package present

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/output/words"
)

// Summary is the one-line status of the engine's state a person reads in
// a tooltip or a report: GPUs, jobs on the GPU (and stuck on the CPU),
// environments, broken ones, and whether the environment search was cut
// short: "2 GPUs · 3 jobs on GPU · 1 env broken · search incomplete". Its
// counts are words' (CountJobs, Verdicts), as every summary's.
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
	j := words.CountJobs(s.Processes)
	if j.OnGPU > 0 || len(s.Processes) > 0 {
		parts = append(parts, words.Count(j.OnGPU, "job on GPU", "jobs on GPU"))
	}
	if j.Stuck > 0 {
		parts = append(parts, words.Count(j.Stuck, "job on CPU", "jobs on CPU"))
	}
	if j.Orphaned > 0 {
		parts = append(parts, words.Count(j.Orphaned, "orphaned PID", "orphaned PIDs"))
	}
	broken, warn := words.Verdicts(s.Envs)
	parts = append(parts, words.Count(len(s.Envs), "env", "envs"))
	if broken > 0 {
		parts = append(parts, words.Count(broken, "env broken", "envs broken"))
	}
	if warn > 0 {
		parts = append(parts, words.Count(warn, "warning", "warnings"))
	}
	if s.SearchStopped != "" {
		parts = append(parts, "search incomplete")
	}
	return strings.Join(parts, " · ")
}

// CheckSummary is Summary for a one-shot check (no processes).
func CheckSummary(r monitor.CheckResult) string {
	stopped := r.SearchStopped
	if !r.Complete && stopped == "" {
		stopped = "the search was cut short"
	}
	return Summary(monitor.State{GPU: r.GPU, Envs: r.Envs, SearchStopped: stopped})
}
