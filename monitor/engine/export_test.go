package engine

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// Hooks for the engine's tests (package engine_test), which run it through
// monitortest.

// Sync waits until the Run goroutine has handled every request queued
// before it (Add, Forget, Reconfigure).
func Sync(m *Monitor) error { return do(m, func(context.Context) {}) }

// ReadNow reads env on the Run goroutine, as a settled file event does,
// and waits until what it found is published.
func ReadNow(m *Monitor, env string) error {
	return do(m, func(ctx context.Context) { m.refreshEnv(ctx, env) })
}

func do(m *Monitor, f func(context.Context)) error {
	done := make(chan struct{})
	if err := m.request(func(ctx context.Context) { f(ctx); close(done) }); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-m.stopped:
		return ErrStopped
	}
}

// SetNewFS replaces the kernel's file watcher (before Run).
func SetNewFS(m *Monitor, start func() (*fsnotify.Watcher, error)) { m.newFS = start }

// SetAddWatch replaces adding one watch (before Run).
func SetAddWatch(m *Monitor, add func(fsw *fsnotify.Watcher, path string) error) { m.addWatch = add }

// LoseSiteEvents stops routing site's events, as if the kernel's queue had
// dropped them.
func LoseSiteEvents(m *Monitor, site string) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	delete(m.w.sites, site)
}

// Overflow reports the kernel's file event queue overflowing.
func Overflow(m *Monitor) { m.w.fs.Errors <- fsnotify.ErrEventOverflow }

// RequestQueue is how many requests can wait for the Run goroutine.
func RequestQueue(m *Monitor) int { return cap(m.requests) }

// Debouncer is the watcher's debounce, for its own tests.
type Debouncer = debouncer

// NewDebouncer is newDebouncer.
func NewDebouncer(c Clock, d time.Duration, fire func(string)) *Debouncer {
	return newDebouncer(c, d, fire)
}

// Touch and Stop expose the debouncer's methods.
func (b *debouncer) Touch(key string) bool { return b.touch(key) }
func (b *debouncer) Stop()                 { b.stop() }

// SetInspect replaces how one environment is read (inspect.InspectOne),
// before Run: a test's read can hang for real.
func SetInspect(m *Monitor, read func(ctx context.Context, f envsearch.Found, g gpu.State, o health.Options) monitor.EnvReport) {
	m.inspect = read
}
