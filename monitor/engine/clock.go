package engine

import "time"

// Clock is the engine's time: event times, the polling and rediscovery
// tickers, the debounce timers and the wait for a half-finished install.
// The wall clock runs in production; tests inject monitortest.Clock,
// which moves only when told, so no test races the real one.
type Clock interface {
	Now() time.Time
	// NewTicker ticks every d until stopped, as time.NewTicker.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine after d, as time.AfterFunc.
	AfterFunc(d time.Duration, f func()) Timer
}

// Ticker is a time.Ticker behind Clock.
type Ticker interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

// Timer is the timer of an AfterFunc (a *time.Timer on the wall clock).
type Timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// realClock is the wall clock.
type realClock struct{}

var _ Clock = realClock{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTicker) Stop()                 { r.t.Stop() }
