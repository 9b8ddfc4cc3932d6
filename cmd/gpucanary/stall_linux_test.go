//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
)

// stallSim writes the scenario of TestStallWatchJSON: GPU 0 at util %
// drawing watts of its 300 W, where job holds 2 GiB; GPU 1 idle, where
// idle (a notebook that never computed) holds 2 GiB. Each write's file
// time is a second later than the last, so the backend sees every one.
type stallSim struct {
	path      string
	job, idle int
	written   time.Time
}

func (s *stallSim) set(t *testing.T, util int, watts float64) {
	t.Helper()
	data := fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA RTX A6000", "uuid": "GPU-0", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
   "memory_used_bytes": 2147483648, "utilization_gpu_percent": %d, "power_watts": %g, "power_limit_watts": 300,
   "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]},
  {"name": "NVIDIA RTX A6000", "uuid": "GPU-1", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
   "memory_used_bytes": 2147483648, "utilization_gpu_percent": 0, "power_watts": 20, "power_limit_watts": 300,
   "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]}]}`, util, watts, s.job, s.idle)
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s.written = s.written.Add(time.Second)
	if s.written.Before(time.Now()) {
		s.written = time.Now().Add(time.Second)
	}
	if err := os.Chtimes(tmp, s.written, s.written); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		t.Fatal(err)
	}
}

// TestStallWatchJSON runs `watch --json` with short stall settings while
// a real sleeping process is a GPU process holding 2 GiB: it computes
// (90 %), then its GPU idles (JOB_STALLED, saying it sleeps), computes
// again (cleared), then spins at a tenth of the power limit
// (JOB_SPINNING) and draws power again (cleared). Another sleeping
// process holding 2 GiB on an idle GPU throughout, one that never
// computed, raises nothing.
func TestStallWatchJSON(t *testing.T) {
	job := startGPUJob(t, "", "sleep 300")
	idle := startGPUJob(t, "", "sleep 301")
	sim := &stallSim{path: filepath.Join(t.TempDir(), "gpu.json"), job: job.cmd.Process.Pid, idle: idle.cmd.Process.Pid}
	sim.set(t, 90, 280)
	job.release(t, 0) // the shell now sleeps in sleep 300, its child
	idle.release(t, 0)
	settings := "refresh = \"100ms\"\nstall_window = \"1s\"\nstall_arm_after = \"1ms\"\n"
	events := watchEvents(t, settings, sim.path)
	nextOf(t, events, monitor.KindEnvAdded) // the first read, processes included, is done

	var seen []monitor.Event
	// next waits for the next event of kind about code and the job,
	// keeping every event seen.
	next := func(kind monitor.Kind, code string) monitor.Event {
		t.Helper()
		timeout := time.After(90 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("watch ended before %s %s; events: %v", kind, code, seen)
				}
				seen = append(seen, ev)
				if ev.Kind == kind && ev.Finding != nil && ev.Finding.Code == code && ev.PID == sim.job {
					return ev
				}
			case <-timeout:
				t.Fatalf("no %s %s; events: %v", kind, code, seen)
			}
		}
	}
	// Computing for 3 s: many polls at 100ms; two armed it (1ms).
	time.Sleep(3 * time.Second)
	sim.set(t, 0, 30)
	ev := next(monitor.KindFindingRaised, finding.CodeJobStalled)
	t.Log(ev.Message)
	if ev.Finding.Severity != finding.SeverityWarning || !strings.Contains(ev.Message, "sh -c") ||
		!strings.Contains(ev.Message, "2.0 GiB of GPU memory on GPU 0 with the GPU idle (0% utilisation)") ||
		!strings.Contains(ev.Message, "sleeping") {
		t.Errorf("JOB_STALLED = %+v", ev)
	}
	sim.set(t, 90, 280)
	ev = next(monitor.KindFindingCleared, finding.CodeJobStalled)
	if !strings.Contains(ev.Message, "uses its GPU again") {
		t.Errorf("cleared: %q", ev.Message)
	}
	sim.set(t, 99, 30)
	ev = next(monitor.KindFindingRaised, finding.CodeJobSpinning)
	t.Log(ev.Message)
	if !strings.Contains(ev.Message, "GPU 0 at 99% utilisation while it draws 30 W of its 300 W limit (10%)") {
		t.Errorf("JOB_SPINNING = %q", ev.Message)
	}
	sim.set(t, 99, 290)
	next(monitor.KindFindingCleared, finding.CodeJobSpinning)
	for _, ev := range seen {
		if ev.PID == sim.idle || ev.Finding != nil && (ev.Finding.Code == finding.CodeJobStalled || ev.Finding.Code == finding.CodeJobSpinning) && ev.PID != sim.job {
			t.Errorf("told of another process: %+v", ev)
		}
	}
}
