package app

import (
	"slices"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestProcessCellsUnknown: the GPU processes window shows "-" for what
// is unknown of a process outside this view (CPU %, RSS, runtime), not
// 0.0 and 0 B.
func TestProcessCellsUnknown(t *testing.T) {
	outside := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 77777, Name: "(not visible here)"}, Verdict: procs.VerdictGPU, OutsideContainer: true}}
	for _, col := range []string{"CPU %", "RSS", "Runtime"} {
		if got := cell(outside, slices.Index(procColumns, col), time.Now()); got != "-" {
			t.Errorf("%s = %q, want -", col, got)
		}
	}
	measured := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 4242}, Verdict: procs.VerdictCUDAIdle}}
	if got := cell(measured, slices.Index(procColumns, "CPU %"), time.Now()); got != "0.0" {
		t.Errorf("a measured idle process: CPU %% = %q", got)
	}
}
