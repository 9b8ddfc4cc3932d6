package app

import (
	"fmt"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// BenchmarkProcessesWindow500 is one refresh of the processes window with
// 500 rows, rendered: the frame time a 2-second refresh costs the UI.
func BenchmarkProcessesWindow500(b *testing.B) {
	a := test.NewTempApp(b)
	p := newProcsWindow(newUI(a, Deps{}).wins)
	p.win.Resize(fyne.NewSize(1200, 700))
	s := monitor.State{Started: true, GPU: gpu.State{Driver: "550", Devices: []gpu.Device{{Name: "A100", MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 10 << 30}}}}
	for i := 0; i < 500; i++ {
		mem := uint64(i) << 24
		s.Processes = append(s.Processes, monitor.Process{Row: procs.Row{
			Proc: procs.Proc{PID: 1000 + i, User: "u", Name: "python", Cmdline: []string{"python", fmt.Sprintf("train_%d.py", i)},
				CPUPercent: float64(i % 100), RSSBytes: 1 << 30, StartTime: time.Now().Add(-time.Hour), EnvPath: "/home/u/proj/.venv"},
			GPUs: []int{0}, GPUMemoryBytes: &mem, Verdict: procs.VerdictGPU}})
	}
	for b.Loop() {
		p.refresh(s)
		p.win.Canvas().Capture()
	}
}
