package procs

import (
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestGraphicsProcesses: a process NVML lists only as a graphics process
// and that has no ML runtime loaded (a display server, a compositor) is
// marked Graphics, not a job; a job that also renders, or that NVML
// lists as compute anywhere, is a job.
func TestGraphicsProcesses(t *testing.T) {
	ps := []Proc{
		{PID: 900, HostPID: 900, Name: "Xorg", StartTime: t0},
		{PID: 901, HostPID: 901, Name: "gnome-shell", StartTime: t0},
		proc(100, 1, "libtorch_cpu.so", "libtorch_cuda.so"),
		{PID: 902, HostPID: 902, Name: "blender", StartTime: t0},
	}
	g := gpu.State{Driver: "550.54.15", Devices: []gpu.Device{
		{Index: 0, Processes: []gpu.Process{
			{PID: 900, Type: "graphics", UsedMemoryBytes: mem(300 << 20)},
			{PID: 901, Type: "graphics", UsedMemoryBytes: mem(100 << 20)},
			{PID: 100, Type: "graphics", UsedMemoryBytes: mem(1 << 20)}, // renders too: still a job
			{PID: 902, Type: "graphics", UsedMemoryBytes: mem(1 << 20)},
		}},
		{Index: 1, Processes: []gpu.Process{{PID: 902, Type: "compute", UsedMemoryBytes: mem(2 << 30)}}}, // computes on GPU 1
	}}
	rows := Classify(ps, g, nil, nil, DefaultBusyRule, nil, t0.Add(time.Minute), nil)
	for pid, graphics := range map[int]bool{900: true, 901: true, 100: false, 902: false} {
		r := rowOf(t, rows, pid)
		if r.Graphics != graphics || r.Job() == graphics || r.Verdict != VerdictGPU {
			t.Errorf("PID %d: graphics %v, job %v, verdict %s; want graphics %v", pid, r.Graphics, r.Job(), r.Verdict, graphics)
		}
	}
}
