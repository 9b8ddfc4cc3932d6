// Package monitortest is the one harness for tests of the live engine:
// it runs an engine.Monitor over real files until the test ends, collects
// the events it publishes and waits for them, and holds the fixtures such
// tests share: a simulated GPU, a find-links folder of torch wheels that
// real pip installs from, and a clock that moves only when told. The
// engine's own tests, the tray's, the windows' and the present package's
// fixtures all use it.
//
// It imports monitor, monitor/engine and the test fixtures of the leaves
// (wheeltest); nothing imports it but tests.
package monitortest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// A100 is a simulated A100 on driver 550 (CUDA 12.4).
const A100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}`

// SimGPU is a simulated GPU backend reading scenario (gpu.Options.SimFile's
// JSON), closed when the test ends.
func SimGPU(t testing.TB, scenario string) gpu.Backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	b := gpu.Open(gpu.Options{SimFile: path})
	t.Cleanup(func() { b.Close() })
	return b
}

// Engine is a running engine and the events it published.
type Engine struct {
	M *engine.Monitor

	t      testing.TB
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	events []monitor.Event
	notify chan struct{}
	// drain asks the collector to take in every event already published
	// and close the channel it is handed when it has.
	drain chan chan struct{}
}

// Start runs engine.New(o) until the test ends and returns once its first
// full read is published. Left unset: the GPU is A100, the poll interval
// 200 ms, rediscovery off.
func Start(t testing.TB, o engine.Options) *Engine {
	t.Helper()
	if o.GPU == nil {
		o.GPU = SimGPU(t, A100)
	}
	if o.Interval == 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.Rediscover == 0 {
		o.Rediscover = -1
	}
	return Run(t, engine.New(o))
}

// Run runs m (made by the test, hooks set) until the test ends, collecting
// its events, and returns once its first full read is published and
// collected: Events holds it.
func Run(t testing.TB, m *engine.Monitor) *Engine {
	t.Helper()
	e := &Engine{M: m, t: t, done: make(chan struct{}), notify: make(chan struct{}, 1), drain: make(chan chan struct{})}
	ch, _ := m.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					return
				}
				e.add(ev)
			case drained := <-e.drain:
				// Everything published so far is in ch's buffer (the hub
				// hands events over before publish returns).
				for more := true; more; {
					select {
					case ev, ok := <-ch:
						if !ok {
							close(drained)
							return
						}
						e.add(ev)
					default:
						more = false
					}
				}
				close(drained)
			}
		}
	}()
	go func() {
		defer close(e.done)
		defer func() { <-collected }()
		if err := m.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(e.Stop)
	select {
	case <-m.Started():
	case <-e.done:
		t.Fatal("the engine stopped before it started")
	case <-time.After(30 * time.Second):
		t.Fatal("the engine did not start in 30s")
	}
	drained := make(chan struct{})
	select {
	case e.drain <- drained:
		<-drained
	case <-collected: // the engine stopped: every event is collected
	}
	return e
}

// add records one collected event and wakes a Wait.
func (e *Engine) add(ev monitor.Event) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// Stop ends the engine and waits until Run has returned and every event
// it published is collected.
func (e *Engine) Stop() {
	e.cancel()
	<-e.done
}

// Wait returns the first event that matches, or fails the test when none
// came within timeout.
func (e *Engine) Wait(timeout time.Duration, match func(monitor.Event) bool) monitor.Event {
	e.t.Helper()
	deadline := time.After(timeout)
	for {
		if ev, ok := e.find(match); ok {
			return ev
		}
		select {
		case <-e.notify:
		case <-e.done: // every event is collected by now
			if ev, ok := e.find(match); ok {
				return ev
			}
			e.t.Fatalf("the engine stopped with no matching event; events:\n%s", e.Dump())
			return monitor.Event{}
		case <-deadline:
			e.t.Fatalf("no matching event in %s; events:\n%s", timeout, e.Dump())
			return monitor.Event{}
		}
	}
}

func (e *Engine) find(match func(monitor.Event) bool) (monitor.Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if match(ev) {
			return ev, true
		}
	}
	return monitor.Event{}, false
}

// Count is how many events so far match.
func (e *Engine) Count(match func(monitor.Event) bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if match(ev) {
			n++
		}
	}
	return n
}

// Events are the events so far, in the order published.
func (e *Engine) Events() []monitor.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]monitor.Event(nil), e.events...)
}

// Dump lists the events so far, one a line, for a failure message.
func (e *Engine) Dump() string {
	var b strings.Builder
	for _, ev := range e.Events() {
		fmt.Fprintf(&b, "  %s %s %s\n", ev.Kind, ev.Env, ev.Message)
	}
	return b.String()
}

// Kind matches events of kind k about env ("" for any).
func Kind(k monitor.Kind, env string) func(monitor.Event) bool {
	return func(e monitor.Event) bool { return e.Kind == k && (env == "" || e.Env == env) }
}

// Finding matches events of kind k carrying a finding with code.
func Finding(k monitor.Kind, code string) func(monitor.Event) bool {
	return func(e monitor.Event) bool { return e.Kind == k && e.Finding != nil && e.Finding.Code == code }
}
