package monitor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/store"
)

// The state carries what a metrics scrape needs without asking the engine
// anything: when torch last changed and was last replaced (kept across a
// restart), how the last read went, and when the engine last polled.
func TestStateCarriesTorchTimesAndReadStats(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	st := store.Open(t.TempDir())
	e := startEngine(t, Options{Paths: []string{venv}, Store: st})

	s := e.m.State()
	if !s.DiscoveryComplete {
		t.Error("DiscoveryComplete is false for a list of paths")
	}
	if s.LastRead.IsZero() || s.LastReadDuration <= 0 {
		t.Errorf("last read = %v, took %v; want both set once started", s.LastRead, s.LastReadDuration)
	}
	if _, ok := s.TorchChanges[venv]; ok {
		t.Errorf("torch times before any change: %+v", s.TorchChanges[venv])
	}
	polled := s.Polled
	deadline := time.Now().Add(10 * time.Second)
	for !e.m.State().Polled.After(polled) {
		if time.Now().After(deadline) {
			t.Fatalf("Polled stayed at %v for 10s with a 200ms interval", polled)
		}
		time.Sleep(10 * time.Millisecond)
	}

	f.install(t, venv, "2.5.1+cpu")
	ev := e.wait(10*time.Second, kind(KindCUDAWheelReplaced, venv))
	got := e.m.State().TorchChanges[venv]
	if !got.Replaced.Equal(ev.Time) || !got.Changed.Equal(ev.Time) {
		t.Fatalf("torch times = %+v, want both at the replacement %v", got, ev.Time)
	}
	e.stop()

	// A restart remembers the replacement, so an alert on it does not
	// resolve while torch is still the CPU build.
	again := startEngine(t, Options{Paths: []string{venv}, Store: st})
	if kept := again.m.State().TorchChanges[venv]; !kept.Replaced.Equal(ev.Time) {
		t.Fatalf("after a restart the replacement time is %v, want %v", kept.Replaced, ev.Time)
	}

	// Putting the CUDA build back is a change, not a replacement.
	f.install(t, venv, "2.5.1+cu121")
	back := again.wait(10*time.Second, kind(KindTorchChanged, venv))
	now := again.m.State().TorchChanges[venv]
	if !now.Changed.Equal(back.Time) || !now.Replaced.Equal(ev.Time) {
		t.Errorf("after the repair: %+v, want changed %v and replaced still %v", now, back.Time, ev.Time)
	}
}
