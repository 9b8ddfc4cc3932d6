package monitortest

import (
	"slices"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
)

// Clock is an engine.Clock that moves only when Advance is called: the
// engine's tickers tick and its debounce timers fire then, and only then,
// so a test decides when the engine polls, settles or gives up waiting.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

var _ engine.Clock = (*Clock)(nil)

// NewClock is a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// fakeTimer is a pending AfterFunc or a ticker.
type fakeTimer struct {
	c      *Clock
	at     time.Time
	every  time.Duration  // a ticker's period; 0 for an AfterFunc
	f      func()         // an AfterFunc's function
	ch     chan time.Time // a ticker's channel
	active bool
}

// AfterFunc calls f once the clock has been advanced past d from now.
func (c *Clock) AfterFunc(d time.Duration, f func()) engine.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.schedule(t)
	return t
}

// NewTicker ticks on every d the clock is advanced over; like a real
// ticker it drops ticks a slow reader did not take.
func (c *Clock) NewTicker(d time.Duration) engine.Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), every: d, ch: make(chan time.Time, 1)}
	c.schedule(t)
	return fakeTicker{t}
}

// schedule makes t pending; c.mu is held.
func (c *Clock) schedule(t *fakeTimer) {
	t.active = true
	if !slices.Contains(c.timers, t) {
		c.timers = append(c.timers, t)
	}
}

// unschedule makes t not pending and says whether it was; c.mu is held.
func (c *Clock) unschedule(t *fakeTimer) bool {
	was := t.active
	t.active = false
	c.timers = slices.DeleteFunc(c.timers, func(x *fakeTimer) bool { return x == t })
	return was
}

// Advance moves the clock by d. Timers due on the way fire in the order of
// their times; an AfterFunc's function has returned, and a ticker's tick
// is in its channel, before Advance does.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		c.now = next.at
		var f func()
		if next.every > 0 {
			select {
			case next.ch <- next.at:
			default:
			}
			next.at = next.at.Add(next.every)
		} else {
			c.unschedule(next)
			f = next.f
		}
		c.mu.Unlock()
		if f != nil {
			f()
		}
	}
}

// Pending is how many AfterFunc timers wait to fire (tickers left out):
// a test waits on it to know the engine has armed a debounce.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.every == 0 {
			n++
		}
	}
	return n
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at = t.c.now.Add(d)
	t.c.schedule(t)
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.c.unschedule(t)
}

type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) C() <-chan time.Time { return k.t.ch }

func (k fakeTicker) Reset(d time.Duration) {
	k.t.c.mu.Lock()
	defer k.t.c.mu.Unlock()
	k.t.every, k.t.at = d, k.t.c.now.Add(d)
	k.t.c.schedule(k.t)
}

func (k fakeTicker) Stop() { k.t.Stop() }
