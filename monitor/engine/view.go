package engine

import (
	"sync"

	"github.com/gpucanary/gpucanary/monitor"
)

// view is the State readers on any goroutine copy. Only the Run goroutine
// writes it, from its own data, after each change.
type view struct {
	mu sync.RWMutex
	s  monitor.State
}

func (v *view) get() monitor.State {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.s.Clone()
}

func (v *view) update(f func(*monitor.State)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	f(&v.s)
}
