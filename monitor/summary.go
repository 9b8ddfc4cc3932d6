package monitor

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Overall states of the machine, for a status light. The order of the
// checks in Overall is the precedence: a broken environment outranks a
// missing driver, which outranks a simulated GPU.
const (
	OverallHealthy   = "healthy"
	OverallWarning   = "warning"
	OverallError     = "error"
	OverallNoDriver  = "nodriver"
	OverallSimulated = "simulated"
)

// Overall is the one state a status light shows for r.
func (r CheckResult) Overall() string {
	worst := ""
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

// Summary is the one-line status a person reads in a tooltip:
// "2 GPUs · 3 jobs on GPU · 1 env broken".
func (r CheckResult) Summary() string {
	return State{GPU: r.GPU, Envs: r.Envs}.Summary()
}

// Summary is the one-line status of the engine's state: GPUs, jobs on the
// GPU (and stuck on the CPU), broken environments.
func (s State) Summary() string {
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
	var onGPU, offGPU int
	for _, p := range s.Processes {
		switch {
		case p.Verdict == procs.VerdictGPU:
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
		case VerdictError:
			broken++
		case VerdictWarning:
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
	return strings.Join(parts, " · ")
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
