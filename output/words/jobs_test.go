package words

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestCountJobs: a display server holding GPU memory is not a job on the
// GPU, an ML process computing on the CPU is counted on the CPU (and as
// stuck there only when the engine flagged it JOB_ON_CPU).
func TestCountJobs(t *testing.T) {
	row := func(pid int, v procs.Verdict, graphics bool) monitor.Process {
		return monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: pid}, Verdict: v, Graphics: graphics}}
	}
	rows := []monitor.Process{
		row(1, procs.VerdictGPU, false),      // train.py
		row(2, procs.VerdictGPU, true),       // Xorg
		row(3, procs.VerdictGPU, true),       // gnome-shell
		row(4, procs.VerdictCUDAIdle, false), // a CUDA build computing on the CPU
		row(5, procs.VerdictCPU, false),      // a CPU build
		row(6, procs.VerdictOther, false),
	}
	j := CountJobs(rows)
	if j != (Jobs{OnGPU: 1, OnCPU: 2, Other: 3}) || j.String() != "1 job on the GPU, 2 ML processes on the CPU" {
		t.Errorf("CountJobs = %+v %q", j, j)
	}
	rows[4].JobOnCPU = true
	if j := CountJobs(rows); j.Stuck != 1 || j.OnCPU != 2 {
		t.Errorf("with a job flagged JOB_ON_CPU: %+v", j)
	}
	// A PID the driver lists whose process exited is no job anywhere.
	rows = append(rows[3:4], row(7, procs.VerdictOrphaned, false))
	if j := CountJobs(rows); j != (Jobs{OnCPU: 1, Orphaned: 1}) || j.String() != "0 jobs on the GPU, 1 ML process on the CPU, 1 exited process still holding GPU memory" {
		t.Errorf("with an orphaned PID: %+v %q", j, j)
	}
}
