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
	s := NewScanner(Options{})
	ctx := context.Background()
	if _, err := s.Scan(ctx); err != nil {
		b.Fatal(err)
	}
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Name: "A100", ComputeCapability: "8.0"}}}
	b.ReportAllocs()
	start := cpuTime()
	n := 0
	for b.Loop() {
		ps, err := s.Scan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		Classify(ps, g, nil, DefaultBusyRule, nil, time.Now())
		n++
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
}

// BenchmarkPsutilScan1000 runs the psutil peer over the same kind of
// process table and reports its CPU time for one steady-state refresh.
func BenchmarkPsutilScan1000(b *testing.B) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import psutil").Run(); err != nil {
		b.Skip("/usr/bin/python3 has no psutil (Debian's python3-psutil; make deps-test installs it)")
	}
	startSleepers(b, 1000)
	script, _ := filepath.Abs(filepath.Join("testdata", "psutil_scan.py"))
	var total float64
	n := 0
	for b.Loop() {
		out, err := exec.Command(py, script, "3").Output()
		if err != nil {
			b.Fatalf("psutil peer: %v", err)
		}
		f := strings.Fields(string(out))
		sec, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			b.Fatalf("psutil peer said %q", out)
		}
		total += sec
		n++
	}
	b.ReportMetric(total*1000/float64(n), "cpu-ms/op")
}
