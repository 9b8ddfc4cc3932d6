package engine_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// orphanA100 lists PID 4242 holding 8 GiB.
const orphanA100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "memory_used_bytes": 8589934592,
              "processes": [{"pid": 4242, "type": "compute", "used_memory_bytes": 8589934592}]}]}`

// TestGPUMemoryOrphaned: 8 GiB held by a PID that does not exist raises
// GPU_MEMORY_ORPHANED about the machine on the second poll that sees it
// (not the first: the process may have exited just after the snapshot),
// and it clears when the memory is accounted for again.
func TestGPUMemoryOrphaned(t *testing.T) {
	var gone atomic.Bool
	gone.Store(true)
	alive := func(pid int) bool { return pid != 4242 || !gone.Load() }
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	e := monitortest.Start(t, engine.Options{
		Discover: envsearch.Options{Paths: []string{}, Home: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" }},
		GPU:      monitortest.SimGPU(t, orphanA100), Clock: clock, Interval: every, Alive: alive,
	})
	orphaned := func() *finding.Finding {
		for _, f := range e.M.State().Findings {
			if f.Code == finding.CodeGPUMemoryOrphaned {
				return &f
			}
		}
		return nil
	}
	poll := func() {
		t.Helper()
		clock.Advance(every)
		deadline := time.Now().Add(5 * time.Second)
		for !e.M.State().Polled.Equal(clock.Now()) {
			if time.Now().After(deadline) {
				t.Fatal("the engine did not poll within 5s")
			}
			time.Sleep(time.Millisecond)
		}
	}

	poll()
	if f := orphaned(); f != nil {
		t.Fatalf("raised on the first poll that saw it: %+v", f)
	}
	poll()
	f := orphaned()
	if f == nil || f.Severity != finding.SeverityWarning || !strings.HasPrefix(f.Message, "GPU 0 (NVIDIA A100-SXM4-40GB): 8.0 GiB is held by no live process") {
		t.Fatalf("after two polls: %+v", f)
	}
	e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeGPUMemoryOrphaned))

	gone.Store(false)
	poll()
	if f := orphaned(); f != nil {
		t.Errorf("still raised once the PID runs: %+v", f)
	}
	e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingCleared, finding.CodeGPUMemoryOrphaned))
}
