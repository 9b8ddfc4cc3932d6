//go:build linux || windows

package procs

import (
	"context"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// The process refresh on each platform with about a hundred processes
// alive, the number on a desktop: docs/performance.md sets Linux's figure beside
// Windows's (this benchmark under wine: make bench-windows). procs is how
// many processes each refresh listed; cpu-ms/op the CPU time this process
// spent (startSleepers and cpuTime are each platform's: bench_test.go,
// bench_windows_test.go).

// sleepersTo starts sleepers until at least n processes are alive.
func sleepersTo(b *testing.B, n int) {
	b.Helper()
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if len(ps) < n {
		startSleepers(b, n-len(ps))
	}
}

// BenchmarkScan100 is one refresh (scan + verdicts) after a first scan
// that learned every process: the steady state of a running engine.
func BenchmarkScan100(b *testing.B) {
	sleepersTo(b, 100)
	benchRefresh(b, NewSource(Options{}))
}

// benchRefresh times one refresh of s (scan + verdicts) after a first scan
// that learned every process, and reports the CPU time this process spent
// a refresh (cpu-ms/op) and how many processes each listed (procs).
func benchRefresh(b *testing.B, s interface {
	Scan(context.Context) ([]Proc, error)
}) {
	ctx := context.Background()
	if _, err := s.Scan(ctx); err != nil {
		b.Fatal(err)
	}
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Name: "A100", ComputeCapability: "8.0"}}}
	b.ReportAllocs()
	start := cpuTime()
	n, listed := 0, 0
	for b.Loop() {
		ps, err := s.Scan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		Classify(ps, g, nil, nil, DefaultBusyRule, nil, time.Now(), nil)
		n, listed = n+1, len(ps)
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(listed), "procs")
}

// BenchmarkFirstScan100 is the first refresh of a new source (engine
// start, one-shot `gpucanary ps`): every process is new, so its identity,
// environment and libraries are all read.
func BenchmarkFirstScan100(b *testing.B) {
	sleepersTo(b, 100)
	ctx := context.Background()
	listed := 0
	for b.Loop() {
		ps, err := NewSource(Options{}).Scan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		listed = len(ps)
	}
	b.ReportMetric(float64(listed), "procs")
}
