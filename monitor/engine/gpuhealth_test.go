package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// healthScenario is an RTX A6000 at 90 % whose HW thermal counter stands
// at ns, with the Xids given.
func healthScenario(ns uint64, xids ...int) string {
	var xs []string
	for _, x := range xids {
		xs = append(xs, fmt.Sprintf(`{"xid": %d}`, x))
	}
	return fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA RTX A6000", "uuid": "GPU-a6000", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
  "utilization_gpu_percent": 90, "temperature_c": 86, "power_watts": 290, "power_limit_watts": 300,
  "throttle_ns": {"hw_thermal": %d}, "xid_events": [%s]}]}`, ns, strings.Join(xs, ", "))
}

// TestGPUHealthFindings: the engine raises GPU_THROTTLED once the HW
// thermal counter grew half of the window, notifies it although it is a
// warning, and clears it once the counter stops; each new Xid is raised
// (and told) again, and GPU_XID clears its hold after the last.
func TestGPUHealthFindings(t *testing.T) {
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	sim := newSimGPU(t, healthScenario(0))
	e := monitortest.Start(t, engine.Options{
		Discover: envsearch.Options{Paths: []string{}, Home: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" }},
		GPU:      sim, Clock: clock, Interval: every,
		GPUHealth: health.GPUWatchOptions{ThrottleWindow: 4 * time.Second, PCIeWindow: 2 * time.Second, XidHold: 3 * time.Second},
	})
	poll := func() {
		t.Helper()
		clock.Advance(every)
		deadline := time.Now().Add(10 * time.Second)
		for !e.M.State().Polled.Equal(clock.Now()) {
			if time.Now().After(deadline) {
				t.Fatal("the engine did not poll within 10s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	throttled := monitortest.Finding(monitor.KindFindingRaised, finding.CodeGPUThrottled)
	var ns uint64
	for range 5 {
		ns += uint64(500 * time.Millisecond)
		sim.set(healthScenario(ns))
		poll()
	}
	ev := e.Wait(10*time.Second, throttled)
	if !ev.Notify || ev.Finding.Severity != finding.SeverityWarning || ev.Finding.Env != "gpu:0" ||
		!strings.Contains(ev.Message, "HW thermal slowdown 50% of the last 4 s, at 86 °C, 290 W of 300 W") {
		t.Errorf("raised: %+v", ev)
	}
	for range 6 {
		poll() // the counter stands still
	}
	ev = e.Wait(10*time.Second, monitortest.Finding(monitor.KindFindingCleared, finding.CodeGPUThrottled))
	if !ev.Notify || !strings.Contains(ev.Message, "GPU 0 runs at full speed again") {
		t.Errorf("cleared: %+v", ev)
	}

	xid := monitortest.Finding(monitor.KindFindingRaised, finding.CodeGPUXid)
	sim.set(healthScenario(ns, 45)) // an application's own
	poll()
	sim.set(healthScenario(ns, 45, 79))
	poll()
	ev = e.Wait(10*time.Second, xid)
	if !ev.Notify || ev.Finding.Severity != finding.SeverityError || !strings.Contains(ev.Message, "reported Xid 79 (the GPU fell off the bus)") {
		t.Errorf("Xid 79: %+v", ev)
	}
	sim.set(healthScenario(ns, 45, 79, 48))
	poll()
	e.Wait(10*time.Second, func(ev monitor.Event) bool { return xid(ev) && strings.Contains(ev.Message, "Xid 48") })
	if n := e.Count(xid); n != 2 {
		t.Errorf("%d GPU_XID raised, want one for each new hardware Xid: %s", n, e.Dump())
	}
	for range 4 {
		poll()
	}
	e.Wait(10*time.Second, monitortest.Finding(monitor.KindFindingCleared, finding.CodeGPUXid))
	if strings.Contains(e.Dump(), "Xid 45") {
		t.Errorf("an application's Xid was told: %s", e.Dump())
	}
}
