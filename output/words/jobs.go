package words

import (
	"strings"

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

// verdictWords are the verdicts as a person reads them, in capitals so
// they stand out beside a path: the JSON keeps the codes ("no-torch"),
// the views say words ("NO TORCH").
var verdictWords = map[monitor.Verdict]string{
	monitor.VerdictOK: "OK", monitor.VerdictWarning: "WARNING", monitor.VerdictError: "ERROR", monitor.VerdictNoTorch: "NO TORCH",
}

// VerdictWord is how check, watch and the environments window name an
// environment's verdict; one this table does not know (a newer engine's)
// is its code in capitals.
func VerdictWord(v monitor.Verdict) string {
	if w, ok := verdictWords[v]; ok {
		return w
	}
	return strings.ToUpper(string(v))
}

// VerdictWords are every verdict's word, in no order: a view sizes the
// place it shows one in by the widest.
func VerdictWords() []string {
	out := make([]string, 0, len(verdictWords))
	for _, w := range verdictWords {
		out = append(out, w)
	}
	return out
}

// NoDriver is what every view says where a GPU would be when no NVIDIA
// driver answers: check's GPU line and the status line alike.
const NoDriver = "no NVIDIA driver"
