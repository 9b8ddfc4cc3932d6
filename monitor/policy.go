package monitor

import (
	"sync"
	"time"
)

// Policy decides which events become notifications. It lives in the engine
// so the tray and `watch` agree: identical findings are told once, a kind
// is not repeated for an environment within a cooldown, a resolved problem
// gets a clear notification, and an environment can be snoozed.
type Policy struct {
	mu sync.Mutex
	// Cooldown is the least time between two notifications of one kind
	// about one environment.
	Cooldown time.Duration
	// Kinds, when non-empty, lists the only kinds that may notify.
	Kinds map[string]bool

	last    map[string]time.Time // env|kind -> last notified
	told    map[string]bool      // finding or job key -> its raise was notified
	snoozed map[string]time.Time // env -> until
	paused  time.Time            // all notifications until
}

// NewPolicy returns a policy with the default 10-minute cooldown.
func NewPolicy() *Policy {
	return &Policy{Cooldown: 10 * time.Minute, last: map[string]time.Time{}, told: map[string]bool{}, snoozed: map[string]time.Time{}}
}

// notifies lists the kinds that notify by default. Additions and removals
// of environments, and new installs, are shown in history only.
var notifies = map[string]bool{
	KindCUDAWheelReplaced: true,
	KindTorchChanged:      true,
	KindTorchRemoved:      true,
	KindJobOnCPU:          true,
	KindJobOnCPUCleared:   true,
	KindFindingRaised:     true,
	KindFindingCleared:    true,
	KindGPUStateChanged:   true,
}

// Snooze silences notifications about env until the given time.
func (p *Policy) Snooze(env string, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snoozed[env] = until
}

// Pause silences every notification until the given time.
func (p *Policy) Pause(until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = until
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

// Decide sets e.Notify. batchTold says whether a torch event about the same
// environment was notified in the same update, so the findings it causes
// (TORCH_CPU_BUILD after CUDA_WHEEL_REPLACED) are not told twice.
func (p *Policy) Decide(e *Event, batchTold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Notify = false
	key := subjectKey(e)
	switch e.Kind {
	case KindFindingCleared, KindJobOnCPUCleared:
		// A clear is told only when its raise was told.
		if !p.told[key] {
			return
		}
		delete(p.told, key)
	case KindFindingRaised:
		if e.Finding == nil || e.Finding.Severity != "error" {
			return
		}
		if batchTold {
			p.told[key] = true
			return
		}
	}
	if !notifies[e.Kind] || (len(p.Kinds) > 0 && !p.Kinds[e.Kind]) {
		return
	}
	now := e.Time
	if now.Before(p.paused) || now.Before(p.snoozed[e.Env]) {
		return
	}
	cool := e.Env + "|" + e.Kind
	if e.Kind == KindFindingRaised || e.Kind == KindJobOnCPU {
		cool = key
	}
	if t, ok := p.last[cool]; ok && now.Sub(t) < p.Cooldown && e.Kind != KindFindingCleared && e.Kind != KindJobOnCPUCleared {
		return
	}
	p.last[cool] = now
	if e.Kind == KindFindingRaised || e.Kind == KindJobOnCPU {
		p.told[key] = true
	}
	e.Notify = true
}

// subjectKey names what a finding or job event is about. Job events carry
// their JOB_ON_CPU finding, so a raise and its clear share a key.
func subjectKey(e *Event) string {
	if e.Finding != nil {
		return e.Finding.Key()
	}
	return e.Kind + "|" + e.Env
}

// SetKinds replaces the kinds that may notify; empty means all.
func (p *Policy) SetKinds(kinds []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(kinds) == 0 {
		p.Kinds = nil
		return
	}
	p.Kinds = map[string]bool{}
	for _, k := range kinds {
		p.Kinds[k] = true
	}
}

// Allows reports whether events of kind may notify at all under the
// current kinds (snoozes, pauses and cooldowns aside).
func (p *Policy) Allows(kind string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return notifies[kind] && (len(p.Kinds) == 0 || p.Kinds[kind])
}
