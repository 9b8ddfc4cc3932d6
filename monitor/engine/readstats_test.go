package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// The state carries what a metrics scrape needs without asking the engine
// anything: how the last read went and when the engine last polled. On a
// stopped clock the times are exact.
func TestStateCarriesReadStats(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clock := monitortest.NewClock(start)
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, Clock: clock})
	s := e.M.State()
	if !s.DiscoveryComplete {
		t.Error("DiscoveryComplete is false for a list of paths")
	}
	if !s.LastRead.Equal(start) || s.LastReadDuration != 0 || !s.Polled.Equal(start) {
		t.Errorf("last read %v (took %v), polled %v; want all at %v on a stopped clock", s.LastRead, s.LastReadDuration, s.Polled, start)
	}
	if _, ok := s.TorchChanges[venv]; ok {
		t.Errorf("torch times before any change: %+v", s.TorchChanges[venv])
	}
	clock.Advance(200 * time.Millisecond) // one poll interval
	want := start.Add(200 * time.Millisecond)
	deadline := time.Now().Add(30 * time.Second)
	for !e.M.State().Polled.Equal(want) {
		if time.Now().After(deadline) {
			t.Fatalf("Polled = %v after a tick, want %v", e.M.State().Polled, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// When torch last changed and was last replaced is kept across a
// restart, so an alert on a replacement does not resolve while torch is
// still the CPU build; putting the CUDA build back is a change, not a
// replacement.
func TestTorchTimesSurviveARestart(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	st := store.Open(t.TempDir())
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, Store: st})
	f.Install(t, venv, "2.5.1+cpu")
	ev := e.Wait(10*time.Second, monitortest.Kind(monitor.KindCUDAWheelReplaced, venv))
	got := e.M.State().TorchChanges[venv]
	if !got.Replaced.Equal(ev.Time) || !got.Changed.Equal(ev.Time) {
		t.Fatalf("torch times = %+v, want both at the replacement %v", got, ev.Time)
	}
	e.Stop()

	again := monitortest.Start(t, engine.Options{Paths: []string{venv}, Store: st})
	if kept := again.M.State().TorchChanges[venv]; !kept.Replaced.Equal(ev.Time) {
		t.Fatalf("after a restart the replacement time is %v, want %v", kept.Replaced, ev.Time)
	}
	f.Install(t, venv, "2.5.1+cu121")
	back := again.Wait(10*time.Second, monitortest.Kind(monitor.KindTorchChanged, venv))
	now := again.M.State().TorchChanges[venv]
	if !now.Changed.Equal(back.Time) || !now.Replaced.Equal(ev.Time) {
		t.Errorf("after the repair: %+v, want changed %v and replaced still %v", now, back.Time, ev.Time)
	}
}
