package text

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestProcessesUnknowns: in ps's table a process outside this view (a
// PID NVML lists that no process here has) shows "-" for CPU %, RSS and
// TIME, which are unknown, never 0.0 and 0 B, and so does a PID whose
// process exited, whose verdict is orphaned (a golden file).
func TestProcessesUnknowns(t *testing.T) {
	start := time.Date(2026, 3, 14, 13, 39, 0, 0, time.UTC)
	mem := func(n uint64) *uint64 { return &n }
	ps := []procs.Proc{
		{PID: 4242, HostPID: 4242, PPID: 1, Name: "python", User: "ada", Cmdline: []string{"python", "train.py"}, StartTime: start,
			CPUPercent: 99.5, CPUTimeSeconds: 5400, RSSBytes: 6 << 30, GPULibs: []string{"libtorch_cpu.so", "libtorch_cuda.so"}, EnvPath: "/home/ada/llm/.venv"},
		{PID: 900, HostPID: 900, PPID: 1, Name: "Xorg", User: "root", Cmdline: []string{"/usr/lib/xorg/Xorg", ":0"}, StartTime: start.Add(-time.Hour),
			CPUPercent: 1.5, RSSBytes: 200 << 20, GPULibs: []string{}},
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0",
		MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 7 << 30, Processes: []gpu.Process{
			{PID: 4242, Type: "compute", UsedMemoryBytes: mem(4 << 30)},
			{PID: 900, Type: "graphics", UsedMemoryBytes: mem(300 << 20)},
			{PID: 77777, Type: "compute", UsedMemoryBytes: mem(2 << 30)},
			{PID: 66666, Type: "compute", UsedMemoryBytes: mem(1 << 30)},
		}}}}
	now := start.Add(90 * time.Minute)
	// 77777 runs where this view cannot see it; 66666 exited (orphaned).
	running := func(pid int) bool { return pid != 66666 }
	rows := inspect.Processes(ps, g, nil, nil, procs.DefaultBusyRule, nil, now, running)
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ada", Now: func() time.Time { return now }}.Processes(g, rows)
	path := filepath.Join("testdata", "ps-unknowns.txt.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", path, b.String())
	}
}
