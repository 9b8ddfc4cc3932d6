package monitor

import (
	"fmt"
	"strings"
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
// "2 GPUs · 3 environments · 1 broken".
func (r CheckResult) Summary() string {
	var parts []string
	switch n := len(r.GPU.Devices); {
	case !r.GPU.HasDriver():
		parts = append(parts, "no NVIDIA driver")
	case n == 1:
		parts = append(parts, "1 GPU")
	default:
		parts = append(parts, fmt.Sprintf("%d GPUs", n))
	}
	if r.GPU.Simulated {
		parts[0] += " (simulated)"
	}
	var bad, warn int
	for _, e := range r.Envs {
		switch e.Verdict {
		case VerdictError:
			bad++
		case VerdictWarning:
			warn++
		}
	}
	parts = append(parts, count(len(r.Envs), "environment", "environments"))
	if bad > 0 {
		parts = append(parts, fmt.Sprintf("%d broken", bad))
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
