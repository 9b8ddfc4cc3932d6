package inspect

import "github.com/gpucanary/gpucanary/monitor"

// goneReason is the reason of a row whose PID the driver lists but no
// process has, on the host's PID namespace.
const goneReason = "NVML lists this PID, but no process has it: the process is gone and the driver still holds its GPU memory (GPU_MEMORY_ORPHANED)"

// MarkGone rewrites each row the driver lists under a PID no process here
// has (procs.Row.OutsideContainer), where alive (procs.HostPIDs) says it
// is not running: on the host's PID namespace such a PID is no other
// container's process, but memory no live process holds. alive nil (a
// view that cannot tell) leaves every row as it is.
func MarkGone(rows []monitor.Process, alive func(pid int) bool) {
	if alive == nil {
		return
	}
	for i := range rows {
		if r := &rows[i]; r.OutsideContainer && !alive(r.PID) {
			r.Name, r.Reason = "(not running)", goneReason
		}
	}
}
