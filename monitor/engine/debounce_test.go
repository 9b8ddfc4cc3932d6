package engine_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
)

// TestDebouncer: a key fires once it has been quiet for the settle time,
// each touch starting the wait again; keys are independent; nothing fires
// after stop.
func TestDebouncer(t *testing.T) {
	clock := monitortest.NewClock(time.Now())
	var mu sync.Mutex
	var fired []string
	b := engine.NewDebouncer(clock, 300*time.Millisecond, func(k string) {
		mu.Lock()
		defer mu.Unlock()
		fired = append(fired, k)
	})
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(fired)
	}
	if !b.Touch("a") {
		t.Error("the first touch did not begin a burst")
	}
	clock.Advance(200 * time.Millisecond)
	if b.Touch("a") {
		t.Error("a touch within the burst began another")
	}
	b.Touch("b")
	clock.Advance(200 * time.Millisecond) // a: 200 ms after its last touch
	if f := got(); len(f) != 0 {
		t.Fatalf("fired %v before a key was quiet for the settle time", f)
	}
	clock.Advance(100 * time.Millisecond)
	if f := got(); !slices.Equal(f, []string{"a", "b"}) {
		t.Fatalf("fired %v, want a then b", f)
	}
	if !b.Touch("a") {
		t.Error("a touch after the key fired did not begin a new burst")
	}
	b.Stop()
	clock.Advance(time.Second)
	if f := got(); len(f) != 2 {
		t.Errorf("fired %v after stop", f)
	}
	if b.Touch("c") || clock.Pending() != 0 {
		t.Error("a touch after stop armed a timer")
	}
}
