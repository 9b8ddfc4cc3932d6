package engine

import (
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
)

// Policy decides which events become notifications. It lives in the engine
// so the tray and `watch` agree: identical findings are told once, a kind
// is not repeated for an environment within a cooldown, a resolved problem
// gets a clear notification, and an environment can be snoozed. It holds
// the one pause of all notifications, which the tray's menu sets and
// shows. Safe for use from any goroutine.
type Policy struct {
	mu sync.Mutex
	// cooldown is the least time between two notifications of one kind
	// about one environment.
	cooldown time.Duration
	// kinds, when non-empty, lists the only kinds that may notify.
	kinds map[monitor.Kind]bool

	last    map[string]time.Time // env|kind (or the finding's key) -> last notified
	told    map[string]bool      // finding or job key -> its raise was notified
	snoozed map[string]time.Time // env -> until
	paused  time.Time            // all notifications until
}

// NewPolicy returns a policy with the default 10-minute cooldown, every
// default kind allowed.
func NewPolicy() *Policy {
	return &Policy{cooldown: 10 * time.Minute, last: map[string]time.Time{}, told: map[string]bool{}, snoozed: map[string]time.Time{}}
}

// notifies lists the kinds that notify by default. Additions and removals
// of environments, and new installs, are shown in history only.
var notifies = map[monitor.Kind]bool{
	monitor.KindCUDAWheelReplaced: true,
	monitor.KindTorchChanged:      true,
	monitor.KindTorchRemoved:      true,
	monitor.KindJobOnCPU:          true,
	monitor.KindJobOnCPUCleared:   true,
	monitor.KindFindingRaised:     true,
	monitor.KindFindingCleared:    true,
	monitor.KindGPUStateChanged:   true,
	// The GPU health codes (gpuhealth.go): their FINDING_RAISED and
	// FINDING_CLEARED notify, warnings included, while the code is
	// allowed; the settings name the code to keep one.
	finding.CodeGPUThrottled:    true,
	finding.CodeGPULost:         true,
	finding.CodeGPUXid:          true,
	finding.CodePCIeDegraded:    true,
	finding.CodeGPUMemoryErrors: true,
	finding.CodeVRAMSpill:       true,
	finding.CodeDriverReset:     true,
	monitor.KindJobEnded:        true,
	finding.CodeJobStalled:      true,
	finding.CodeJobSpinning:     true,
}

// healthCode is the GPU health code e's finding has, "" when it has none:
// such a finding event is allowed by its code, not by its kind.
func healthCode(e *monitor.Event) monitor.Kind {
	if e.Finding == nil || (e.Kind != monitor.KindFindingRaised && e.Kind != monitor.KindFindingCleared) {
		return ""
	}
	if k := monitor.Kind(e.Finding.Code); gpuHealthCodes[k] {
		return k
	}
	return ""
}

var gpuHealthCodes = map[monitor.Kind]bool{
	finding.CodeGPUThrottled: true, finding.CodeGPULost: true, finding.CodeGPUXid: true,
	finding.CodePCIeDegraded: true, finding.CodeGPUMemoryErrors: true,
	// A stalled or spinning job (stall.go) is allowed by its code too.
	finding.CodeJobStalled: true, finding.CodeJobSpinning: true,
	finding.CodeVRAMSpill: true, finding.CodeDriverReset: true,
}

// Snooze silences notifications about env until the given time (zero
// unsnoozes). env may be a job's subject (JobSubject): then the
// notifications about that job are silenced, whatever its environment.
func (p *Policy) Snooze(env string, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snoozed[env] = until
}

// Unsnooze lifts a snooze (a job's, when the job ends) and forgets it.
func (p *Policy) Unsnooze(env string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.snoozed, env)
}

// Snoozed reports until when env is snoozed (zero when it is not).
func (p *Policy) Snoozed(env string, now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.snoozed[env]; u.After(now) {
		return u
	}
	return time.Time{}
}

// Pause silences every notification until the given time (zero resumes).
func (p *Policy) Pause(until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = until
}

// Paused reports until when every notification is paused (zero when they
// are not).
func (p *Policy) Paused(now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused.After(now) {
		return p.paused
	}
	return time.Time{}
}

// SetKinds replaces the kinds that may notify; empty means the default.
func (p *Policy) SetKinds(kinds []monitor.Kind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(kinds) == 0 {
		p.kinds = nil
		return
	}
	p.kinds = map[monitor.Kind]bool{}
	for _, k := range kinds {
		p.kinds[k] = true
	}
}

// Allows reports whether events of kind may notify at all under the
// current kinds (snoozes, pauses and cooldowns aside).
func (p *Policy) Allows(kind monitor.Kind) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.allows(kind)
}

func (p *Policy) allows(kind monitor.Kind) bool {
	return notifies[kind] && (len(p.kinds) == 0 || p.kinds[kind])
}

// DecideAll decides one published batch of events, in order: once a
// torch change about an environment is told, the findings it causes in
// the same batch (TORCH_CPU_BUILD after CUDA_WHEEL_REPLACED) are not told
// again.
func (p *Policy) DecideAll(events []monitor.Event) {
	told := map[string]bool{}
	for i := range events {
		e := &events[i]
		p.Decide(e, told[e.Env])
		if e.Notify && (e.Kind == monitor.KindCUDAWheelReplaced || e.Kind == monitor.KindTorchChanged || e.Kind == monitor.KindTorchRemoved) {
			told[e.Env] = true
		}
	}
}

// Decide sets e.Notify, at e.Time. batchTold says whether a torch event
// about the same environment was notified in the same batch.
func (p *Policy) Decide(e *monitor.Event, batchTold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Notify = false
	key := subjectKey(e)
	switch e.Kind {
	case monitor.KindFindingCleared, monitor.KindJobOnCPUCleared:
		// A clear is told only when its raise was told.
		if !p.told[key] {
			return
		}
		delete(p.told, key)
	case monitor.KindFindingRaised:
		// A GPU's health is told from a warning up: a throttled or
		// degraded GPU is what a person training wants to hear of.
		if e.Finding == nil || e.Finding.Severity != finding.SeverityError &&
			(healthCode(e) == "" || e.Finding.Severity != finding.SeverityWarning) {
			return
		}
		if batchTold {
			p.told[key] = true
			return
		}
	}
	kind := e.Kind
	if code := healthCode(e); code != "" {
		kind = code
	}
	if !p.allows(kind) {
		return
	}
	now := e.Time
	if now.Before(p.paused) || now.Before(p.snoozed[e.Env]) || e.PID != 0 && now.Before(p.snoozed[JobSubject(e.PID)]) {
		return
	}
	cool := e.Env + "|" + string(e.Kind)
	if e.Kind == monitor.KindFindingRaised || e.Kind == monitor.KindJobOnCPU || e.Kind == monitor.KindJobEnded {
		cool = key
	}
	if t, ok := p.last[cool]; ok && now.Sub(t) < p.cooldown && e.Kind != monitor.KindFindingCleared && e.Kind != monitor.KindJobOnCPUCleared {
		return
	}
	p.last[cool] = now
	if e.Kind == monitor.KindFindingRaised || e.Kind == monitor.KindJobOnCPU {
		p.told[key] = true
	}
	e.Notify = true
}

// subjectKey names what a finding or job event is about. Job events carry
// their JOB_ON_CPU finding, so a raise and its clear share a key.
func subjectKey(e *monitor.Event) string {
	if e.Finding != nil {
		return e.Finding.Key()
	}
	return string(e.Kind) + "|" + e.Env
}
