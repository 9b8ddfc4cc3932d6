package words

import (
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Jobs counts GPU processes by what they do, the one count every summary
// says: jobs on the GPU (holding GPU memory; graphics processes, a
// compositor or a display server, are not jobs), ML processes computing
// on the CPU (verdict cpu or cuda-idle: a GPU workload they are not),
// and the rest (graphics processes, and ML runtimes of which nothing can
// be said). Orphaned is PIDs NVML lists that no process runs under (a
// crashed job whose memory the driver still holds): no job anywhere.
// Stuck is those on the CPU the engine flagged JOB_ON_CPU (busy there for
// its whole window): the tray's "job on CPU".
type Jobs struct{ OnGPU, OnCPU, Other, Orphaned, Stuck int }

// CountJobs counts rows for a report or a summary.
func CountJobs(rows []monitor.Process) Jobs {
	var j Jobs
	for _, r := range rows {
		switch {
		case r.Job():
			j.OnGPU++
		case r.Verdict == procs.VerdictCPU || r.Verdict == procs.VerdictCUDAIdle:
			j.OnCPU++
		case r.Verdict == procs.VerdictOrphaned:
			j.Orphaned++
		default:
			j.Other++
		}
		if r.JobOnCPU && !r.Job() {
			j.Stuck++
		}
	}
	return j
}

// String is "2 jobs on the GPU, 1 ML process on the CPU, 1 exited
// process still holding GPU memory".
func (j Jobs) String() string {
	s := Count(j.OnGPU, "job on the GPU", "jobs on the GPU")
	if j.OnCPU > 0 {
		s += ", " + Count(j.OnCPU, "ML process on the CPU", "ML processes on the CPU")
	}
	if j.Orphaned > 0 {
		s += ", " + Count(j.Orphaned, "exited process still holding GPU memory", "exited processes still holding GPU memory")
	}
	return s
}

// Verdicts counts environments by verdict: broken (an error) and with
// warnings, the one count of check's last line and the tray's summary.
func Verdicts(envs []monitor.EnvReport) (broken, warnings int) {
	for _, e := range envs {
		switch e.Verdict {
		case monitor.VerdictError:
			broken++
		case monitor.VerdictWarning:
			warnings++
		}
	}
	return broken, warnings
}
