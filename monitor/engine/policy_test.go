package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/finding"
)

var time0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// TestPolicyDecide runs the policy over sequences of events: each step is
// an event at a time after time0 and whether it is told.
func TestPolicyDecide(t *testing.T) {
	const env = "/p/.venv"
	cpuBuild := &finding.Finding{Code: finding.CodeTorchCPUBuild, Env: env, Severity: finding.SeverityError}
	warning := &finding.Finding{Code: "OLD_DRIVER", Env: env, Severity: finding.SeverityWarning}
	job := &finding.Finding{Code: finding.CodeJobOnCPU, Env: env, PID: 7}
	ev := func(k monitor.Kind, f *finding.Finding) monitor.Event {
		return monitor.Event{Kind: k, Env: env, Finding: f}
	}
	type step struct {
		at   time.Duration
		e    monitor.Event
		told bool
	}
	tests := []struct {
		name  string
		setup func(p *Policy)
		steps []step
	}{
		{"a replaced wheel is told, then not again within the cooldown", nil, []step{
			{0, ev(monitor.KindCUDAWheelReplaced, nil), true},
			{time.Minute, ev(monitor.KindCUDAWheelReplaced, nil), false},
			{11 * time.Minute, ev(monitor.KindCUDAWheelReplaced, nil), true},
		}},
		{"history-only kinds are never told", nil, []step{
			{0, ev(monitor.KindEnvAdded, nil), false},
			{0, ev(monitor.KindEnvRemoved, nil), false},
			{0, ev(monitor.KindTorchInstalled, nil), false},
		}},
		{"an error finding is told once, its clear too", nil, []step{
			{0, ev(monitor.KindFindingRaised, cpuBuild), true},
			{time.Minute, ev(monitor.KindFindingCleared, cpuBuild), true},
			{2 * time.Minute, ev(monitor.KindFindingCleared, cpuBuild), false},
		}},
		{"a warning is not told, nor its clear", nil, []step{
			{0, ev(monitor.KindFindingRaised, warning), false},
			{time.Minute, ev(monitor.KindFindingCleared, warning), false},
		}},
		{"a clear whose raise was not told is not told", nil, []step{
			{0, ev(monitor.KindFindingCleared, cpuBuild), false},
			{0, ev(monitor.KindJobOnCPUCleared, job), false},
		}},
		{"a job on the CPU and its clear", nil, []step{
			{0, ev(monitor.KindJobOnCPU, job), true},
			{time.Minute, ev(monitor.KindJobOnCPUCleared, job), true},
		}},
		{"snoozed: nothing about the environment", func(p *Policy) { p.Snooze(env, time0.Add(time.Hour)) }, []step{
			{0, ev(monitor.KindCUDAWheelReplaced, nil), false},
			{61 * time.Minute, ev(monitor.KindCUDAWheelReplaced, nil), true},
		}},
		{"paused: nothing at all", func(p *Policy) { p.Pause(time0.Add(time.Hour)) }, []step{
			{0, ev(monitor.KindCUDAWheelReplaced, nil), false},
			{time.Minute, monitor.Event{Kind: monitor.KindGPUStateChanged}, false},
			{61 * time.Minute, ev(monitor.KindCUDAWheelReplaced, nil), true},
		}},
		{"only the kinds chosen", func(p *Policy) { p.SetKinds([]monitor.Kind{monitor.KindJobOnCPU}) }, []step{
			{0, ev(monitor.KindCUDAWheelReplaced, nil), false},
			{0, ev(monitor.KindJobOnCPU, job), true},
		}},
		{"the kinds chosen cannot add a history-only kind", func(p *Policy) { p.SetKinds([]monitor.Kind{monitor.KindEnvAdded}) }, []step{
			{0, ev(monitor.KindEnvAdded, nil), false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPolicy()
			if tt.setup != nil {
				tt.setup(p)
			}
			for i, s := range tt.steps {
				e := s.e
				e.Time = time0.Add(s.at)
				p.Decide(&e, false)
				if e.Notify != s.told {
					t.Errorf("step %d (%s at +%s): told %v, want %v", i, e.Kind, s.at, e.Notify, s.told)
				}
			}
		})
	}
}

// TestPolicyBatch: a torch change told in a batch keeps the error finding
// it causes in the same batch from being told again, and that finding's
// clear is told later all the same.
func TestPolicyBatch(t *testing.T) {
	const env = "/p/.venv"
	cpuBuild := &finding.Finding{Code: finding.CodeTorchCPUBuild, Env: env, Severity: finding.SeverityError}
	p := NewPolicy()
	batch := []monitor.Event{
		{Time: time0, Kind: monitor.KindCUDAWheelReplaced, Env: env},
		{Time: time0, Kind: monitor.KindFindingRaised, Env: env, Finding: cpuBuild},
		{Time: time0, Kind: monitor.KindFindingRaised, Env: "/other", Finding: &finding.Finding{Code: finding.CodeTorchCPUBuild, Env: "/other", Severity: finding.SeverityError}},
	}
	p.DecideAll(batch)
	if !batch[0].Notify || batch[1].Notify || !batch[2].Notify {
		t.Errorf("told %v %v %v, want true false true", batch[0].Notify, batch[1].Notify, batch[2].Notify)
	}
	clear := []monitor.Event{{Time: time0.Add(time.Minute), Kind: monitor.KindFindingCleared, Env: env, Finding: cpuBuild}}
	p.DecideAll(clear)
	if !clear[0].Notify {
		t.Error("the clear of a finding whose raise the torch change told was not told")
	}
}

func TestPolicyPausedAndSnoozed(t *testing.T) {
	p := NewPolicy()
	if !p.Paused(time0).IsZero() || !p.Snoozed("/a", time0).IsZero() {
		t.Fatal("a new policy is paused or snoozed")
	}
	until := time0.Add(time.Hour)
	p.Pause(until)
	p.Snooze("/a", until)
	if !p.Paused(time0).Equal(until) || !p.Snoozed("/a", time0).Equal(until) {
		t.Errorf("paused until %s, /a snoozed until %s; want %s", p.Paused(time0), p.Snoozed("/a", time0), until)
	}
	if !p.Paused(until).IsZero() || !p.Snoozed("/a", until).IsZero() {
		t.Error("still paused or snoozed once the time has passed")
	}
	p.Pause(time.Time{})
	if !p.Paused(time0).IsZero() {
		t.Error("resuming did not end the pause")
	}
}

// TestSettingsNameTheKindsThatNotify: the settings file refuses a notify
// kind outside config.NotifyKinds, so that list must be exactly the kinds
// the policy can tell.
func TestSettingsNameTheKindsThatNotify(t *testing.T) {
	var policy []string
	for k := range notifies {
		policy = append(policy, string(k))
	}
	slices.Sort(policy)
	settings := slices.Sorted(slices.Values(config.NotifyKinds))
	if !slices.Equal(policy, settings) {
		t.Errorf("the policy notifies %v; the settings take %v", policy, settings)
	}
}

// TestPolicyGPUHealth: a GPU health warning notifies (other warnings do
// not), and a notify list that leaves its code out silences it, raise
// and clear.
func TestPolicyGPUHealth(t *testing.T) {
	at := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	ev := func(kind monitor.Kind, code string, sev finding.Severity) monitor.Event {
		return monitor.Event{Time: at, Kind: kind, Finding: &finding.Finding{Code: code, Severity: sev, Env: "gpu:0"}}
	}
	p := NewPolicy()
	for _, tc := range []struct {
		e    monitor.Event
		want bool
	}{
		{ev(monitor.KindFindingRaised, finding.CodeGPUThrottled, finding.SeverityWarning), true},
		{ev(monitor.KindFindingRaised, finding.CodePCIeDegraded, finding.SeverityInfo), false},
		{ev(monitor.KindFindingRaised, finding.CodeWatchDegraded, finding.SeverityWarning), false},
		{ev(monitor.KindFindingCleared, finding.CodeGPUThrottled, finding.SeverityWarning), true},
		{ev(monitor.KindFindingRaised, finding.CodeVRAMSpill, finding.SeverityWarning), true},
		{ev(monitor.KindFindingRaised, finding.CodeDriverReset, finding.SeverityError), true},
	} {
		e := tc.e
		p.Decide(&e, false)
		if e.Notify != tc.want {
			t.Errorf("%s %s/%s: notify %v, want %v", e.Kind, e.Finding.Code, e.Finding.Severity, e.Notify, tc.want)
		}
	}
	p = NewPolicy()
	p.SetKinds([]monitor.Kind{monitor.KindFindingRaised, monitor.KindFindingCleared, finding.CodeGPULost})
	for _, tc := range []struct {
		e    monitor.Event
		want bool
	}{
		{ev(monitor.KindFindingRaised, finding.CodeGPUThrottled, finding.SeverityWarning), false},
		{ev(monitor.KindFindingCleared, finding.CodeGPUThrottled, finding.SeverityWarning), false},
		{ev(monitor.KindFindingRaised, finding.CodeGPULost, finding.SeverityError), true},
		{ev(monitor.KindFindingRaised, finding.CodeVRAMSpill, finding.SeverityWarning), false},
		{ev(monitor.KindFindingRaised, finding.CodeDriverReset, finding.SeverityError), false},
	} {
		e := tc.e
		p.Decide(&e, false)
		if e.Notify != tc.want {
			t.Errorf("with a list naming GPU_LOST: %s %s: notify %v, want %v", e.Kind, e.Finding.Code, e.Notify, tc.want)
		}
	}
}

// TestPolicyJobSnooze: a job's snooze (JobSubject) silences the events
// about that job's PID whatever their environment, and no other job's;
// Unsnooze lifts it. JOB_STALLED is allowed by its own code.
func TestPolicyJobSnooze(t *testing.T) {
	at := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	stall := func(pid int) monitor.Event {
		return monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Env: "/srv/llm/.venv", PID: pid,
			Finding: &finding.Finding{Code: finding.CodeJobStalled, Severity: finding.SeverityWarning, Env: "/srv/llm/.venv", PID: pid}}
	}
	p := NewPolicy()
	p.Snooze(JobSubject(4242), at.Add(time.Hour))
	for _, tc := range []struct {
		pid  int
		want bool
	}{{4242, false}, {5151, true}} {
		e := stall(tc.pid)
		p.Decide(&e, false)
		if e.Notify != tc.want {
			t.Errorf("PID %d with job 4242 snoozed: notify %v, want %v", tc.pid, e.Notify, tc.want)
		}
	}
	p.Unsnooze(JobSubject(4242))
	e := stall(4242)
	p.Decide(&e, false)
	if !e.Notify {
		t.Error("still silenced once the job's snooze was lifted")
	}
	p = NewPolicy()
	p.SetKinds([]monitor.Kind{monitor.KindFindingRaised, finding.CodeJobSpinning})
	e = stall(4242)
	p.Decide(&e, false)
	if e.Notify {
		t.Error("JOB_STALLED told with a notify list that leaves it out")
	}
}
