//go:build linux

package procs

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/shirou/gopsutil/v3/process"
)

// startSleepers starts n processes that sleep, and stops them at the end.
func startSleepers(b *testing.B, n int) {
	b.Helper()
	cmds := make([]*exec.Cmd, 0, n)
	b.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	for i := 0; i < n; i++ {
		c := exec.Command("sleep", "600")
		if err := c.Start(); err != nil {
			b.Fatalf("starting sleeper %d: %v", i, err)
		}
		cmds = append(cmds, c)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScan1000 is one full refresh (scan + verdicts) with at least
// 1000 processes alive, after a first scan that learned them (the steady
// state of a running engine). Goals: <= 25 ms and <= 2 MB a refresh.
// cpu-ms/op is the CPU time this process spent, to compare with the
// psutil peer (BenchmarkPsutilScan1000).
func BenchmarkScan1000(b *testing.B) {
	startSleepers(b, 1000)
	benchRefresh(b, newScanner(Options{}))
}

// BenchmarkPsutilScan1000 runs the psutil peer (testdata/psutil_scan.py,
// under Debian's /usr/bin/python3 with python3-psutil) over the same kind
// of process table. cpu-ms/op is the CPU time of one steady-state refresh
// as the script measures it (time.process_time, the peer of this package's
// cpu-ms/op); run-cpu-ms is the whole interpreter run (start, import,
// a warming refresh and 3 measured ones) from os.ProcessState. One
// iteration takes seconds: run it with -benchtime 1x.
func BenchmarkPsutilScan1000(b *testing.B) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import psutil").Run(); err != nil {
		b.Skip("/usr/bin/python3 has no psutil (Debian's python3-psutil; make deps-test installs it)")
	}
	startSleepers(b, 1000)
	script, err := filepath.Abs(filepath.Join("testdata", "psutil_scan.py"))
	if err != nil {
		b.Fatal(err)
	}
	var refresh, run time.Duration
	n := 0
	for b.Loop() {
		cmd := exec.Command(py, script, "3")
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("psutil peer: %v", err)
		}
		f := strings.Fields(string(out))
		if len(f) != 2 {
			b.Fatalf("psutil peer said %q", out)
		}
		sec, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			b.Fatalf("psutil peer said %q", out)
		}
		if rows, _ := strconv.Atoi(f[1]); rows < 1000 {
			b.Fatalf("psutil peer saw %d processes, want at least 1000", rows)
		}
		refresh += time.Duration(sec * float64(time.Second))
		run += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		n++
	}
	b.ReportMetric(float64(refresh)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(run)/float64(time.Millisecond)/float64(n), "run-cpu-ms")
}

// BenchmarkFirstScan1000 is the first refresh of a new scanner (engine
// start, one-shot `gpucanary ps`): every process is new, so its identity,
// environment and maps are all read.
func BenchmarkFirstScan1000(b *testing.B) {
	startSleepers(b, 1000)
	ctx := context.Background()
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Name: "A100", ComputeCapability: "8.0"}}}
	b.ReportAllocs()
	for b.Loop() {
		ps, err := newScanner(Options{}).Scan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		Classify(ps, g, nil, nil, DefaultBusyRule, nil, time.Now(), nil)
	}
}

// BenchmarkGopsutilCPURSS1000 is what the refresh would cost with
// gopsutil's per-process calls for CPU %, RSS and parent (kept *Process
// values, boot time cached): the reason the hot path parses /proc itself.
func BenchmarkGopsutilCPURSS1000(b *testing.B) {
	startSleepers(b, 1000)
	ctx := context.Background()
	process.EnableBootTimeCache(true)
	b.Cleanup(func() { process.EnableBootTimeCache(false) })
	kept := map[int32]*process.Process{}
	refresh := func() {
		pids, err := process.PidsWithContext(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, pid := range pids {
			p := kept[pid]
			if p == nil {
				p = &process.Process{Pid: pid}
				kept[pid] = p
			}
			p.PercentWithContext(ctx, 0)
			p.MemoryInfoWithContext(ctx)
			p.PpidWithContext(ctx)
		}
	}
	refresh()
	b.ReportAllocs()
	for b.Loop() {
		refresh()
	}
}
