package monitor

import (
	"errors"
	"testing"
	"time"
)

// TestStoppedEngineRefusesRequests: once Run has returned, Add, Forget
// and Reconfigure say so at once, more of them than the request queue
// holds, instead of blocking the tray's loop forever; a late Subscribe
// gets a closed channel, so its reader ends.
func TestStoppedEngineRefusesRequests(t *testing.T) {
	e := startEngine(t, Options{Paths: []string{t.TempDir()}})
	e.waitStarted()
	e.stop()
	select {
	case <-e.m.Stopped():
	default:
		t.Fatal("Stopped is open after Run returned")
	}
	calls := map[string]func() error{
		"Add":         func() error { return e.m.Add(t.TempDir()) },
		"Forget":      func() error { return e.m.Forget("/nowhere") },
		"Reconfigure": func() error { return e.m.Reconfigure(Settings{}) },
	}
	for name, call := range calls {
		done := make(chan error, 1)
		go func() {
			var err error
			for range 2 * cap(e.m.requests) {
				if err = call(); err == nil {
					break
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrStopped) {
				t.Errorf("%s after stop: %v, want ErrStopped", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s blocked after the engine stopped", name)
		}
	}
	ch, unsubscribe := e.m.Subscribe()
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
