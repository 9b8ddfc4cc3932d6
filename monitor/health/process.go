package health

import (
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// CheckProcess raises JOB_ON_CPU for a process that has been busy off the
// GPU for the whole window: an error for a CPU-only build, a warning for
// a CUDA build that holds no GPU memory.
func CheckProcess(r procs.Row) []finding.Finding {
	if !r.JobOnCPU {
		return nil
	}
	sev := finding.SeverityWarning
	if r.Verdict == procs.VerdictCPU {
		sev = finding.SeverityError
	}
	who := human.Shorten(r.Command(), 80)
	where := ""
	if r.EnvPath != "" {
		where = " in " + r.EnvPath
	}
	// The reason says why it is off the GPU (and that a GPU is there).
	msg := fmt.Sprintf("`%s` (PID %d)%s has been busy on the CPU for %s: %s.",
		who, r.PID, where, r.BusyFor.Round(time.Second), r.Reason)
	return []finding.Finding{{Code: finding.CodeJobOnCPU, Severity: sev, Message: msg, Env: r.EnvPath, PID: r.PID}}
}
