package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// stallScenario: GPU 0 at util % drawing watts of 300 W, where job holds
// 2 GiB; GPU 1 idle throughout, where idle (a notebook that never
// computed) holds 2 GiB.
func stallScenario(job, idle, util int, watts float64) string {
	return fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA RTX A6000", "uuid": "GPU-0", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
   "memory_used_bytes": 2147483648, "utilization_gpu_percent": %d, "power_watts": %g, "power_limit_watts": 300,
   "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]},
  {"name": "NVIDIA RTX A6000", "uuid": "GPU-1", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
   "memory_used_bytes": 2147483648, "utilization_gpu_percent": 0, "power_watts": 20, "power_limit_watts": 300,
   "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]}]}`, util, watts, job, idle)
}

// TestStalledAndSpinningJobs drives a real sleeping process listed as a
// GPU process through a run on an injected clock: it computes past the
// arm time, its GPU goes idle for the window (JOB_STALLED, told, saying
// it sleeps), computes again (cleared), then spins at a tenth of its
// power limit for the window (JOB_SPINNING) and draws power again
// (cleared). Snoozed as a job, its next stall is raised but not told.
// A process that held memory on an idle GPU throughout is never told.
// The times are set on the running engine, as Settings… sets them.
func TestStalledAndSpinningJobs(t *testing.T) {
	job := startHeld(t, "sleep", "300")
	idle := startHeld(t, "sleep", "301")
	pid := job.cmd.Process.Pid
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	sim := newSimGPU(t, stallScenario(pid, idle.cmd.Process.Pid, 90, 280))
	discover := envsearch.Options{Paths: []string{}, Home: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" }}
	e := monitortest.Start(t, engine.Options{
		Discover: discover, GPU: sim, Processes: procs.NewSource(procs.Options{}), Clock: clock, Interval: every,
		StallWindow: time.Hour, StallArmAfter: time.Hour,
	})
	// The settings' times reach a running engine (the tray's Settings…).
	if err := e.M.Reconfigure(engine.Settings{Discover: discover, StallWindow: 3 * time.Second, StallArmAfter: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := engine.Sync(e.M); err != nil {
		t.Fatal(err)
	}
	poll := func(n int) {
		t.Helper()
		for range n {
			clock.Advance(every)
			deadline := time.Now().Add(20 * time.Second)
			for !e.M.State().Polled.Equal(clock.Now()) {
				if time.Now().After(deadline) {
					t.Fatal("the engine did not poll within 20s")
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	about := func(kind monitor.Kind, code string) func(monitor.Event) bool {
		return func(ev monitor.Event) bool {
			return ev.Kind == kind && ev.Finding != nil && ev.Finding.Code == code && ev.PID == pid
		}
	}
	stalled := about(monitor.KindFindingRaised, finding.CodeJobStalled)

	poll(4) // computing: armed after 2 s at load
	sim.set(stallScenario(pid, idle.cmd.Process.Pid, 0, 30))
	poll(2)
	if n := e.Count(stalled); n != 0 {
		t.Fatalf("JOB_STALLED before the window:\n%s", e.Dump())
	}
	poll(3)
	ev := e.Wait(20*time.Second, stalled)
	if !ev.Notify || ev.Finding.Severity != finding.SeverityWarning || ev.Finding.PID != pid ||
		!strings.Contains(ev.Message, "sleep 300 (PID") || !strings.Contains(ev.Message, "2.0 GiB of GPU memory on GPU 0") ||
		!strings.Contains(ev.Message, "is sleeping") {
		t.Errorf("raised: %+v\n%s", ev, ev.Message)
	}
	var row *monitor.Process
	for _, p := range e.M.State().Processes {
		if p.PID == pid {
			row = &p
		}
	}
	if row == nil || len(row.Findings) == 0 || row.Findings[len(row.Findings)-1].Code != finding.CodeJobStalled {
		t.Errorf("the job's row does not carry JOB_STALLED: %+v", row)
	}
	// The stall is marked on the job's GPU, where its idling began.
	stallMark := func(detail string) (monitor.JobMark, bool) {
		for _, mk := range e.M.State().JobMarks {
			if mk.Kind == monitor.MarkStalled && mk.PID == pid && mk.Detail == detail {
				return mk, true
			}
		}
		return monitor.JobMark{}, false
	}
	if mk, ok := stallMark(""); !ok || mk.GPU != 0 || mk.Label != "sleep" || !mk.Time.Before(ev.Time) {
		t.Errorf("the stall's mark: %+v (%v); marks %+v", mk, ok, e.M.State().JobMarks)
	}

	sim.set(stallScenario(pid, idle.cmd.Process.Pid, 90, 280))
	poll(1)
	ev = e.Wait(20*time.Second, about(monitor.KindFindingCleared, finding.CodeJobStalled))
	if !ev.Notify || !strings.Contains(ev.Message, "uses its GPU again") {
		t.Errorf("cleared: %+v", ev)
	}

	sim.set(stallScenario(pid, idle.cmd.Process.Pid, 99, 30))
	poll(5)
	ev = e.Wait(20*time.Second, about(monitor.KindFindingRaised, finding.CodeJobSpinning))
	if !ev.Notify || !strings.Contains(ev.Message, "GPU 0 at 99% utilisation while it draws 30 W of its 300 W limit (10%)") {
		t.Errorf("spinning: %+v\n%s", ev, ev.Message)
	}
	if _, ok := stallMark("spinning"); !ok {
		t.Errorf("no spinning mark: %+v", e.M.State().JobMarks)
	}
	sim.set(stallScenario(pid, idle.cmd.Process.Pid, 99, 280))
	poll(1)
	ev = e.Wait(20*time.Second, about(monitor.KindFindingCleared, finding.CodeJobSpinning))
	if !strings.Contains(ev.Message, "no longer spins") {
		t.Errorf("spin cleared: %+v", ev)
	}

	// Not this job: the next stall is raised, as a state, but not told;
	// the quiet ends with the job, and so does the stall. A process that is no job cannot be
	// quieted.
	if err := e.M.QuietJob(idle.cmd.Process.Pid+1<<22, time.Time{}); !errors.Is(err, engine.ErrNoJob) {
		t.Errorf("QuietJob of no job: %v", err)
	}
	if err := e.M.QuietJob(pid, time.Time{}); err != nil {
		t.Fatal(err)
	}
	sim.set(stallScenario(pid, idle.cmd.Process.Pid, 0, 30))
	poll(5)
	e.Wait(20*time.Second, func(ev monitor.Event) bool { return stalled(ev) && !ev.Notify })
	if e.M.Snoozed(engine.JobSubject(pid), clock.Now()).IsZero() {
		t.Error("the quieted job is not snoozed")
	}
	job.cmd.Process.Kill()
	<-job.done
	for deadline := time.Now().Add(30 * time.Second); !e.M.Snoozed(engine.JobSubject(pid), clock.Now()).IsZero(); {
		if time.Now().After(deadline) {
			t.Fatal("the job's quiet outlived it")
		}
		poll(1)
	}
	stallCleared := about(monitor.KindFindingCleared, finding.CodeJobStalled)
	e.Wait(20*time.Second, func(ev monitor.Event) bool {
		return stallCleared(ev) && strings.Contains(ev.Message, "no longer runs on its GPU (it ended or let go of it)")
	})
	if n := e.Count(stallCleared); n != 2 {
		t.Errorf("JOB_STALLED cleared %d times, want once when it computed again and once at its end:\n%s", n, e.Dump())
	}

	for _, ev := range e.Events() {
		if ev.PID == idle.cmd.Process.Pid && ev.Finding != nil {
			t.Errorf("a process that never computed was told: %+v", ev)
		}
	}
}
