package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// TestStoppedEngineRefusesRequests: once Run has returned, Add, Forget
// and Reconfigure say so at once, more of them than the request queue
// holds, instead of blocking the tray's loop forever; a late Subscribe
// gets a closed channel, so its reader ends.
func TestStoppedEngineRefusesRequests(t *testing.T) {
	e := monitortest.Start(t, engine.Options{Paths: []string{t.TempDir()}})
	e.Stop()
	select {
	case <-e.M.Stopped():
	default:
		t.Fatal("Stopped is open after Run returned")
	}
	calls := map[string]func() error{
		"Add":         func() error { return e.M.Add(t.TempDir()) },
		"Forget":      func() error { return e.M.Forget("/nowhere") },
		"Reconfigure": func() error { return e.M.Reconfigure(engine.Settings{}) },
	}
	for name, call := range calls {
		done := make(chan error, 1)
		go func() {
			var err error
			for range 2 * engine.RequestQueue(e.M) {
				if err = call(); err == nil {
					break
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, engine.ErrStopped) {
				t.Errorf("%s after stop: %v, want ErrStopped", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s blocked after the engine stopped", name)
		}
	}
	ch, unsubscribe := e.M.Subscribe()
	defer unsubscribe()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("a subscription after stop received an event")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a subscription after stop is never closed")
	}
}

// TestRemovedEnvironmentsAreForgotten: an environment deleted while the
// engine runs, and one removed by hand, leave the state, clear their
// findings and are not remembered: the next start reports neither as
// deleted while GPU Canary was not running, nor brings back the one
// removed by hand.
func TestRemovedEnvironmentsAreForgotten(t *testing.T) {
	root := t.TempDir()
	cpu := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1"}} // TORCH_CPU_BUILD on an A100
	deleted, byHand, kept := filepath.Join(root, "a", ".venv"), filepath.Join(root, "b", ".venv"), filepath.Join(root, "c", ".venv")
	for _, p := range []string{deleted, byHand, kept} {
		if err := pyenvtest.Write(p, cpu); err != nil {
			t.Fatal(err)
		}
	}
	st := store.Open(t.TempDir())
	opts := engine.Options{Discover: envsearch.Options{Roots: []string{root}, Home: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" }}, Store: st}
	first := monitortest.Start(t, opts)
	if err := first.M.Forget(byHand); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(deleted); err != nil {
		t.Fatal(err)
	}
	ev := first.Wait(10*time.Second, monitortest.Kind(monitor.KindEnvRemoved, deleted))
	if ev.Offline || ev.Before == nil {
		t.Errorf("removal while running = %+v", ev)
	}
	if err := engine.Sync(first.M); err != nil {
		t.Fatal(err)
	}
	if got := envPaths(first.M.State()); !slices.Equal(got, []string{kept}) {
		t.Errorf("state after the removals = %v, want only %s", got, kept)
	}
	first.Stop()
	for _, p := range []string{deleted, byHand} {
		cleared := first.Count(func(e monitor.Event) bool {
			return monitortest.Finding(monitor.KindFindingCleared, finding.CodeTorchCPUBuild)(e) && e.Env == p
		})
		if cleared != 1 {
			t.Errorf("%s: TORCH_CPU_BUILD cleared %d times, want 1\n%s", p, cleared, first.Dump())
		}
	}
	if n := first.Count(monitortest.Kind(monitor.KindEnvRemoved, byHand)); n != 0 {
		t.Errorf("removing by hand published ENV_REMOVED\n%s", first.Dump())
	}

	second := monitortest.Start(t, opts)
	second.Stop()
	if n := second.Count(monitortest.Kind(monitor.KindEnvRemoved, "")); n != 0 {
		t.Errorf("a removal told again on the next start:\n%s", second.Dump())
	}
	if got := envPaths(second.M.State()); !slices.Equal(got, []string{byHand, kept}) {
		// Forgetting by hand lasts as long as the engine runs; found again
		// on the next start, it is announced as new.
		t.Errorf("state on the next start = %v", got)
	}
	if n := second.Count(monitortest.Kind(monitor.KindEnvAdded, byHand)); n != 1 {
		t.Errorf("%s found again on the next start was announced %d times\n%s", byHand, n, second.Dump())
	}
}

func envPaths(s monitor.State) []string {
	var out []string
	for _, r := range s.Envs {
		out = append(out, r.Path)
	}
	return out
}
