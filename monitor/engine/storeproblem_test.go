//go:build !windows

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// TestAnUnreadableHistoryIsKept: the event history file is there but
// cannot be read (a FIFO; a file over the store's read limit). The engine
// publishes its events as usual, tells STORE_UNREADABLE (an event and a
// finding in the state) naming the file and why, and leaves the file byte
// for byte as it was: the user's history is never replaced by this run's
// few events.
func TestAnUnreadableHistoryIsKept(t *testing.T) {
	for name, plant := range monitortest.UnreadableFiles(store.FileLimit) {
		t.Run(name, func(t *testing.T) {
			venv := filepath.Join(t.TempDir(), ".venv")
			if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1"}}); err != nil { // TORCH_CPU_BUILD on an A100
				t.Fatal(err)
			}
			dir := t.TempDir()
			history := filepath.Join(dir, "events.json")
			plant(t, history)
			before := monitortest.StateOf(t, history)

			e := monitortest.Start(t, engine.Options{Paths: []string{venv}, Store: store.Open(dir)})
			e.Stop() // the first read is published (and appended), the state saved on the way out
			if after := monitortest.StateOf(t, history); after != before {
				t.Errorf("the history file changed: %+v, was %+v", after, before)
			}
			if n := e.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeTorchCPUBuild)); n != 1 {
				t.Errorf("the environment's finding was not published:\n%s", e.Dump())
			}
			raised := e.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeStoreUnreadable))
			var told finding.Finding
			for _, f := range e.M.State().Findings {
				if f.Code == finding.CodeStoreUnreadable {
					told = f
				}
			}
			if raised != 1 || !strings.Contains(told.Message, history) || !strings.Contains(told.Message, "left as it is") {
				t.Errorf("STORE_UNREADABLE raised %d times, in the state as %+v:\n%s", raised, told, e.Dump())
			}
		})
	}
}

// TestAnUntrustedStateFolderIsNotUsed is issue 42 for the engine: a state
// folder another user can write (here: anyone) is neither read nor
// written. The engine publishes its events as usual and tells
// STORE_UNREADABLE once (not once per file), naming the folder, its
// owner and mode and what to do; the planted state (an environment the
// engine would otherwise announce as deleted) is not believed.
func TestAnUntrustedStateFolderIsNotUsed(t *testing.T) {
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1"}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "gpucanary")
	planted := store.Open(dir)
	if err := planted.SaveState(store.State{Envs: map[string]store.EnvRecord{"/gone": {}}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	before := monitortest.StateOf(t, filepath.Join(dir, "state.json"))

	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, Store: store.Open(dir)})
	e.Stop()
	if n := e.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeTorchCPUBuild)); n != 1 {
		t.Errorf("the environment's finding was not published:\n%s", e.Dump())
	}
	if n := e.Count(func(ev monitor.Event) bool { return ev.Kind == monitor.KindEnvRemoved }); n != 0 {
		t.Errorf("the planted state was believed:\n%s", e.Dump())
	}
	if n := e.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeStoreUnreadable)); n != 1 {
		t.Fatalf("STORE_UNREADABLE raised %d times, want once:\n%s", n, e.Dump())
	}
	for _, f := range e.M.State().Findings {
		if f.Code != finding.CodeStoreUnreadable {
			continue
		}
		for _, want := range []string{dir + " is not trusted", "other users can write it", "drwxrwxrwx", store.DirVariable} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("STORE_UNREADABLE does not say %q: %s", want, f.Message)
			}
		}
	}
	if after := monitortest.StateOf(t, filepath.Join(dir, "state.json")); after != before {
		t.Errorf("state.json changed: %+v, was %+v", after, before)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files were written into the folder: %v", ents)
	}
}
