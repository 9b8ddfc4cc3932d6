//go:build !windows

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// TestUnreadableFilesAreLeftAlone: a state or history file that is there
// but cannot be read (a FIFO; a file over the read limit) is not
// replaced: loading says why (store.ErrUnreadable), saving and appending
// refuse, the history shows this run's events from memory, and both
// files are byte for byte what they were. (Tests run as root, so a
// chmod 000 file would still be read: it is not one of the cases.)
func TestUnreadableFilesAreLeftAlone(t *testing.T) {
	for name, plant := range monitortest.UnreadableFiles(store.FileLimit) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var before []monitortest.FileState
			for _, f := range []string{"state.json", "events.json"} {
				p := filepath.Join(dir, f)
				plant(t, p)
				before = append(before, monitortest.StateOf(t, p))
			}
			s := store.Open(dir)
			if _, err := s.LoadState(); !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), "state.json") {
				t.Errorf("LoadState = %v, want ErrUnreadable naming state.json", err)
			}
			if err := s.SaveState(store.State{Envs: map[string]store.EnvRecord{}}); !errors.Is(err, store.ErrUnreadable) {
				t.Errorf("SaveState = %v, want ErrUnreadable", err)
			}
			for range 2 {
				if err := s.Append(map[string]string{"kind": "ENV_ADDED"}); !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), "events.json") {
					t.Errorf("Append = %v, want ErrUnreadable naming events.json", err)
				}
			}
			evs, _, err := store.History[map[string]string](s, store.HistoryLimit)
			if !errors.Is(err, store.ErrUnreadable) || len(evs) != 2 {
				t.Errorf("History = %v, %v; want this run's 2 events and ErrUnreadable", evs, err)
			}
			for i, f := range []string{"state.json", "events.json"} {
				if after := monitortest.StateOf(t, filepath.Join(dir, f)); after != before[i] {
					t.Errorf("%s changed: %+v, was %+v", f, after, before[i])
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Errorf("files were added beside them: %v", ents)
			}
		})
	}
}
