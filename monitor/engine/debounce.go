package engine

import (
	"sync"
	"time"
)

// debouncer calls fire(key) once a key has been quiet for d: one timer per
// key, reset on every touch (the pattern of fsnotify's cmd/fsnotify/dedup.go).
// An install writes thousands of files into site-packages; the environment
// is read once, after it settles.
type debouncer struct {
	mu     sync.Mutex
	clock  Clock
	d      time.Duration
	timers map[string]Timer
	fire   func(key string)
	closed bool
}

func newDebouncer(clock Clock, d time.Duration, fire func(string)) *debouncer {
	return &debouncer{clock: clock, d: d, timers: map[string]Timer{}, fire: fire}
}

// touch (re)starts key's timer. It reports whether this touch began a new
// burst, so the caller can look for the culprit while it is still running.
func (b *debouncer) touch(key string) (first bool) {
	return b.touchAfter(key, b.d)
}

// touchAfter is touch with a delay of its own (a re-check of an install
// still in progress).
func (b *debouncer) touchAfter(key string, d time.Duration) (first bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if t, ok := b.timers[key]; ok {
		t.Reset(d)
		return false
	}
	b.timers[key] = b.clock.AfterFunc(d, func() {
		b.mu.Lock()
		delete(b.timers, key)
		closed := b.closed
		b.mu.Unlock()
		if !closed {
			b.fire(key)
		}
	})
	return true
}

// stop cancels every pending timer; no fire happens after it returns,
// except one already running.
func (b *debouncer) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for k, t := range b.timers {
		t.Stop()
		delete(b.timers, k)
	}
}
