package procs

import "time"

// BusyRule decides when a busy process off the GPU becomes JOB_ON_CPU:
// at or above MinCPUPercent (100 = one core) for Window without a break.
type BusyRule struct {
	MinCPUPercent float64
	Window        time.Duration
}

// DefaultBusyRule is half a core for 20 seconds.
var DefaultBusyRule = BusyRule{MinCPUPercent: 50, Window: 20 * time.Second}

// lifetimeBusy reports whether p's CPU time since it started averages at
// least the threshold over at least the window: proof, without watching,
// that it has been busy that long.
func (r BusyRule) lifetimeBusy(p *Proc, now time.Time) bool {
	if p.StartTime.IsZero() {
		return false
	}
	age := now.Sub(p.StartTime)
	return age >= r.Window && age > 0 && p.CPUTimeSeconds/age.Seconds()*100 >= r.MinCPUPercent
}

type trackKey struct {
	pid   int
	start time.Time
}

// BusyTracker remembers since when each process has been busy. The start
// time is part of the key, so a reused PID starts afresh.
type BusyTracker struct {
	since map[trackKey]time.Time
}

// NewBusyTracker returns an empty tracker.
func NewBusyTracker() *BusyTracker { return &BusyTracker{since: map[trackKey]time.Time{}} }

// observe records one scan of p and returns how long it has been busy.
// A process first seen busy whose lifetime average already meets the rule
// is taken as busy since it started: GPU Canary starting late does not
// delay the finding by a window.
func (t *BusyTracker) observe(p *Proc, rule BusyRule, now time.Time) time.Duration {
	k := trackKey{p.PID, p.StartTime}
	if p.CPUPercent < rule.MinCPUPercent {
		delete(t.since, k)
		return 0
	}
	s, ok := t.since[k]
	if !ok {
		s = now
		if rule.lifetimeBusy(p, now) {
			s = p.StartTime
		}
		t.since[k] = s
	}
	return now.Sub(s)
}

// retain forgets the processes not in alive (exited, or no longer listed).
func (t *BusyTracker) retain(alive map[trackKey]bool) {
	for k := range t.since {
		if !alive[k] {
			delete(t.since, k)
		}
	}
}
