package inspect

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

var update = flag.Bool("update", false, "rewrite golden files")

// UnknownsScene is a scan with what cannot be known: a job on the GPU, a
// display server (a graphics process, no ML runtime), two PIDs NVML
// lists that run but that this view cannot see (another user's under
// hidepid), one compute, one graphics, and one NVML lists that no process
// runs under (66666: a job that crashed). running answers for the PIDs
// NVML lists.
func unknownsScene() ([]procs.Proc, gpu.State, time.Time) {
	start := time.Date(2026, 3, 14, 13, 39, 0, 0, time.UTC)
	mem := func(n uint64) *uint64 { return &n }
	ps := []procs.Proc{
		{PID: 4242, HostPID: 4242, PPID: 1, Name: "python", User: "ada", Cmdline: []string{"python", "train.py"}, StartTime: start,
			CPUPercent: 99.5, CPUTimeSeconds: 5400, RSSBytes: 6 << 30, GPULibs: []string{"libtorch_cpu.so", "libtorch_cuda.so"}, EnvPath: "/home/ada/llm/.venv"},
		{PID: 900, HostPID: 900, PPID: 1, Name: "Xorg", User: "root", Cmdline: []string{"/usr/lib/xorg/Xorg", ":0"}, StartTime: start.Add(-time.Hour),
			CPUPercent: 1.5, CPUTimeSeconds: 60, RSSBytes: 200 << 20, GPULibs: []string{}},
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0",
		MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 7 << 30, Processes: []gpu.Process{
			{PID: 4242, Type: "compute", UsedMemoryBytes: mem(4 << 30)},
			{PID: 900, Type: "graphics", UsedMemoryBytes: mem(300 << 20)},
			{PID: 77777, Type: "compute", UsedMemoryBytes: mem(2 << 30)},
			{PID: 88888, Type: "graphics", UsedMemoryBytes: mem(100 << 20)},
			{PID: 66666, Type: "compute", UsedMemoryBytes: mem(1 << 30)},
		}}}}
	return ps, g, start.Add(90 * time.Minute)
}

// unknownsRunning says 66666 exited and every other PID runs.
func unknownsRunning(pid int) bool { return pid != 66666 }

// TestProcessJSONUnknowns: a process outside this view has no CPU %, CPU
// time, RSS or start time: null and left out, never 0 and 0001-01-01 (a
// golden file); a graphics process is marked so.
func TestProcessJSONUnknowns(t *testing.T) {
	ps, g, now := unknownsScene()
	rows := Processes(ps, g, nil, nil, procs.DefaultBusyRule, nil, now, unknownsRunning)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows); err != nil {
		t.Fatal(err)
	}
	golden(t, "processes-unknowns.json.golden", b.Bytes())

	var back []map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range back {
		outside := r["outside_container"] == true
		orphaned := r["verdict"] == "orphaned"
		if orphaned != (r["pid"] == 66666.0) || orphaned && outside {
			t.Errorf("PID %v: verdict %v, outside_container %v", r["pid"], r["verdict"], outside)
		}
		unknown := outside || orphaned
		_, hasStart := r["start_time"]
		if unknown && (r["cpu_percent"] != nil || r["rss_bytes"] != nil || r["cpu_time_seconds"] != nil || hasStart) {
			t.Errorf("PID %v outside this view or gone shows values: %v", r["pid"], r)
		}
		if !unknown && (r["cpu_percent"] == nil || r["rss_bytes"] == nil || !hasStart) {
			t.Errorf("PID %v lost its values: %v", r["pid"], r)
		}
		if graphics := r["graphics"] == true; graphics != (r["pid"] == 900.0 || r["pid"] == 88888.0) {
			t.Errorf("PID %v graphics = %v", r["pid"], graphics)
		}
	}
	// Read back (the link to the windows process does), the row is whole.
	var again []monitor.Process
	if err := json.Unmarshal(b.Bytes(), &again); err != nil || len(again) != len(rows) || again[0].CPUPercent != 99.5 || !again[2].OutsideContainer {
		t.Errorf("read back: %+v, %v", again, err)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", path, got)
	}
}
