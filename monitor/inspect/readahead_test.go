package inspect

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// TestReadAheadBoundedAndInOrder: reads far faster than their use (kept
// answers) run at most readAhead reports ahead of it, every report is
// used once and in order, and the pass ends (a worker waiting for a slot
// never holds the report use waits for).
func TestReadAheadBoundedAndInOrder(t *testing.T) {
	oldAhead, oldWorkers := readAhead, readWorkers
	readAhead, readWorkers = 2, 6
	t.Cleanup(func() { readAhead, readWorkers = oldAhead, oldWorkers })
	window := int64(max(readAhead, readWorkers))
	found := make([]envsearch.Found, 3000)
	for round := range 20 {
		var started, used, most atomic.Int64
		read := func(_ context.Context, f envsearch.Found) int {
			n := started.Add(1)
			if ahead := n - used.Load(); ahead > most.Load() {
				most.Store(ahead)
			}
			runtime.Gosched()
			return int(n)
		}
		done := make(chan int)
		go func() {
			next := 0
			Each(context.Background(), found, read, func(envsearch.Found, error) int { return -1 },
				func(i int, _ int) bool {
					if i != next {
						t.Errorf("round %d: report %d used after %d", round, i, next-1)
					}
					next++
					used.Add(1)
					if i%7 == 0 {
						runtime.Gosched()
					}
					return true
				})
			done <- next
		}()
		select {
		case n := <-done:
			if n != len(found) {
				t.Fatalf("round %d: %d reports used, want %d", round, n, len(found))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the pass did not end (%d read, %d used)", round, started.Load(), used.Load())
		}
		if m := most.Load(); m > window {
			t.Fatalf("round %d: reads ran %d reports ahead of use, want at most %d", round, m, window)
		}
	}
}
