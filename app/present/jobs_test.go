package present

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestJobsAreNotGraphics: a display server holding GPU memory is not a
// "job on GPU" in the summary the tray shows, and a job computing on the
// CPU is not counted among the jobs on the GPU (words.CountJobs's own
// test counts the same rows).
func TestJobsAreNotGraphics(t *testing.T) {
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
	s := monitor.State{GPU: gpu.State{Driver: "550.54.15", Devices: []gpu.Device{{Name: "A100"}}}, Processes: rows}
	if got, want := Summary(s), "1 GPU · 1 job on GPU · 0 envs"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	s.Processes = rows[1:3]
	if got := Summary(s); got != "1 GPU · 0 jobs on GPU · 0 envs" {
		t.Errorf("only graphics: %q", got)
	}
	// A crashed job's PID, still listed by the driver, is no job on the
	// GPU: the summary says it is orphaned.
	s.Processes = []monitor.Process{row(7, procs.VerdictOrphaned, false)}
	if got := Summary(s); got != "1 GPU · 0 jobs on GPU · 1 orphaned PID · 0 envs" {
		t.Errorf("an orphaned PID: %q", got)
	}
}
