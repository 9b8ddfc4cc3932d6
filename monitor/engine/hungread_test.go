//go:build !windows

package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// hangingRead is an engine whose reads of one environment hang for real:
// each opens a FIFO no one has opened for writing, which waits in the
// kernel (as a read on a dead mount does) until the test releases it.
type hangingRead struct {
	t    *testing.T
	hung string
	// entered gets the hung path as its read starts; read gets every
	// other path once its read has returned.
	entered, read chan string

	mu       sync.Mutex
	fifo     string     // what the next hung read opens
	writers  []*os.File // held open: the FIFOs released
	inFlight sync.WaitGroup
}

func newHangingRead(t *testing.T, m *engine.Monitor, hung string) *hangingRead {
	h := &hangingRead{t: t, hung: hung, entered: make(chan string, 10), read: make(chan string, 100)}
	h.fifo = h.newFIFO()
	engine.SetInspect(m, func(ctx context.Context, f envsearch.Found, g gpu.State, o health.Options) monitor.EnvReport {
		if f.Path != h.hung {
			defer func() { h.read <- f.Path }()
			return inspect.InspectOne(ctx, nil, f, g, o)
		}
		h.inFlight.Add(1)
		defer h.inFlight.Done()
		h.mu.Lock()
		fifo := h.fifo
		h.mu.Unlock()
		h.entered <- f.Path
		if r, err := os.Open(fifo); err == nil { // blocks until released
			r.Close()
		}
		return inspect.InspectOne(ctx, nil, f, g, o)
	})
	t.Cleanup(func() {
		h.release() // after the engine stopped (cleanups run last first)
		h.inFlight.Wait()
		for _, w := range h.writers {
			w.Close()
		}
	})
	return h
}

func (h *hangingRead) newFIFO() string {
	p := filepath.Join(h.t.TempDir(), "never-written")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// release lets the hung reads under way through; the next one hangs
// again.
func (h *hangingRead) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, err := os.OpenFile(h.fifo, os.O_RDWR, 0) // never blocks
	if err != nil {
		h.t.Error(err)
		return
	}
	h.writers = append(h.writers, w)
	h.fifo = h.newFIFO()
}

// othersReadWhileHung reports whether the read of the hung environment
// started and every other one returned (n of them) within a minute: the
// hung read, which only release ends, held none of them.
func (h *hangingRead) othersReadWhileHung(n int) error {
	timeout := time.After(time.Minute)
	for range n {
		select {
		case <-h.read:
		case <-timeout:
			return fmt.Errorf("the other environments were not read while %s's read hung", h.hung)
		}
	}
	select {
	case <-h.entered:
		return nil
	case <-timeout:
		return fmt.Errorf("the read of %s never started", h.hung)
	}
}

// hungAndOthers writes an environment whose read will hang, then four
// others: CUDA torch on the simulated A100.
func hungAndOthers(t *testing.T) (hung string, others []string) {
	root := t.TempDir()
	for i := range 5 {
		p := filepath.Join(root, fmt.Sprintf("env%d", i), ".venv")
		if err := pyenvtest.Write(p, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
			t.Fatal(err)
		}
		others = append(others, p)
	}
	return others[0], others[1:]
}

// TestAHungReadHoldsOnlyItself: the engine's first read and a rescan read
// environments concurrently: while one environment's read hangs in the
// kernel, every other one is read; once it returns, the first read is
// published with the environments in the order given, and a rescan reads
// the others again while it hangs again.
func TestAHungReadHoldsOnlyItself(t *testing.T) {
	hung, others := hungAndOthers(t)
	paths := append([]string{hung}, others...)
	m := engine.New(engine.Options{Paths: paths, GPU: monitortest.SimGPU(t, monitortest.A100), Interval: time.Hour, Rediscover: -1})
	h := newHangingRead(t, m, hung)
	checked := make(chan error, 1)
	go func() {
		err := h.othersReadWhileHung(len(others))
		select {
		case <-m.Started():
			err = fmt.Errorf("the first read was published while %s's read hung", hung)
		default:
		}
		h.release()
		checked <- err
	}()
	e := monitortest.Run(t, m) // returns once the first read is published
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, ev := range e.Events() {
		if ev.Kind == monitor.KindEnvAdded {
			added = append(added, ev.Env)
		}
	}
	if fmt.Sprint(added) != fmt.Sprint(paths) {
		t.Errorf("environments added %v, want %v in that order", added, paths)
	}

	// A rescan (after a lost file event) reads them all again.
	go func() {
		err := h.othersReadWhileHung(len(others))
		h.release()
		checked <- err
	}()
	engine.Overflow(m)
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
	if err := engine.Sync(m); err != nil { // the rescan is done
		t.Fatal(err)
	}
	if n := len(e.M.State().Envs); n != len(paths) {
		t.Errorf("%d environments after the rescan, want %d", n, len(paths))
	}
}

// TestAStopDuringAHungReadWaitsForNothing: an engine stopped while one
// environment's read hangs in the kernel returns from Run at once,
// without waiting for that read, and publishes none of what it read.
func TestAStopDuringAHungReadWaitsForNothing(t *testing.T) {
	hung, others := hungAndOthers(t)
	m := engine.New(engine.Options{Paths: append([]string{hung}, others...), GPU: monitortest.SimGPU(t, monitortest.A100), Interval: time.Hour, Rediscover: -1})
	h := newHangingRead(t, m, hung)
	events, unsubscribe := m.Subscribe()
	defer unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	if err := h.othersReadWhileHung(len(others)); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run waited for the hung read after it was stopped")
	}
	for ev := range events {
		if ev.Env != "" {
			t.Errorf("a stopped first read was published: %s %s", ev.Kind, ev.Env)
		}
	}
}
