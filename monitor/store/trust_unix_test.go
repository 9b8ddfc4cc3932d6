//go:build !windows

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// nobody is the user another user's files belong to in these tests.
const nobody = 65534

// TestUntrustedStateIsNotUsed is issue 42 for the state folder: a folder,
// or a file in it, that another user could have written is neither read
// nor written. Loading says why (ErrUntrusted, naming the path, its
// owner and mode, and what to do); saving and appending refuse; the
// history shows this run's events from memory; every file is byte for
// byte what it was.
func TestUntrustedStateIsNotUsed(t *testing.T) {
	cases := map[string]struct {
		plant func(t *testing.T, dir string) // makes dir or a file in it another user's to write
		path  string                         // what the error names, under dir ("" is dir)
		why   string
	}{
		"folder writable by others": {
			plant: func(t *testing.T, dir string) { chmod(t, dir, 0o777) },
			why:   "other users can write it",
		},
		"folder writable by the group": {
			plant: func(t *testing.T, dir string) { chmod(t, dir, 0o770) },
			why:   "other users can write it",
		},
		"folder of another user": {
			plant: func(t *testing.T, dir string) { chown(t, dir) },
			why:   "belongs to another user",
		},
		"history writable by others": {
			plant: func(t *testing.T, dir string) { chmod(t, filepath.Join(dir, "history.jsonl"), 0o666) },
			path:  "history.jsonl",
			why:   "other users can write it",
		},
		"state of another user": {
			plant: func(t *testing.T, dir string) { chown(t, filepath.Join(dir, "state.json")) },
			path:  "state.json",
			why:   "belongs to another user",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "gpucanary")
			s := store.Open(dir)
			if err := s.SaveState(store.State{Envs: map[string]store.EnvRecord{"/planted": {Seen: time.Now()}}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(map[string]string{"kind": "PLANTED"}); err != nil {
				t.Fatal(err)
			}
			c.plant(t, dir)
			var before []monitortest.FileState
			files := []string{"state.json", "history.jsonl"}
			for _, f := range files {
				before = append(before, monitortest.StateOf(t, filepath.Join(dir, f)))
			}
			named := filepath.Join(dir, c.path)

			s = store.Open(dir)
			st, err := s.LoadState()
			wantUntrusted(t, "LoadState", err, c.path == "history.jsonl", named, c.why)
			if _, ok := st.Envs["/planted"]; ok && c.path != "history.jsonl" {
				t.Errorf("the state was read: %+v", st)
			}
			if c.path != "history.jsonl" {
				if err := s.SaveState(store.State{Envs: map[string]store.EnvRecord{}}); !errors.Is(err, store.ErrUntrusted) {
					t.Errorf("SaveState = %v, want ErrUntrusted", err)
				}
			}
			evs, _, err := store.History[map[string]string](store.Open(dir), 10)
			wantUntrusted(t, "History", err, c.path == "state.json", named, c.why)
			if c.path != "state.json" && len(evs) != 0 {
				t.Errorf("History read the planted history: %v", evs)
			}
			if c.path != "state.json" {
				for range 2 {
					if err := s.Append(map[string]string{"kind": "ENV_ADDED"}); !errors.Is(err, store.ErrUntrusted) {
						t.Errorf("Append = %v, want ErrUntrusted", err)
					}
				}
				evs, _, err = store.History[map[string]string](s, 10)
				if !errors.Is(err, store.ErrUntrusted) || len(evs) != 2 || evs[0]["kind"] != "ENV_ADDED" {
					t.Errorf("History = %v, %v; want this run's 2 events and ErrUntrusted", evs, err)
				}
			}
			for i, f := range files {
				if after := monitortest.StateOf(t, filepath.Join(dir, f)); after != before[i] {
					t.Errorf("%s changed: %+v, was %+v", f, after, before[i])
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != len(files) {
				t.Errorf("files were added beside them: %v", ents)
			}
		})
	}
}

// wantUntrusted checks err is ErrUntrusted naming path, why, its owner
// and mode, and what to do (or nil when ok, for the file the call does
// not read).
func wantUntrusted(t *testing.T, call string, err error, ok bool, path, why string) {
	t.Helper()
	if ok {
		if err != nil {
			t.Errorf("%s = %v, want no error (it does not read %s)", call, err, path)
		}
		return
	}
	if !errors.Is(err, store.ErrUntrusted) {
		t.Fatalf("%s = %v, want ErrUntrusted", call, err)
	}
	for _, want := range []string{path + " is not trusted", why, "owner ", "mode ", "chmod go-w", store.DirVariable} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s's error does not say %q: %v", call, want, err)
		}
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// chown gives p to another user: a real owner, which only root can give.
func chown(t *testing.T, p string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	if err := os.Lchown(p, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

// TestMissingStateFolderIsCreatedPrivate: a state folder that is not
// there is created 0700, whatever the umask lets through.
func TestMissingStateFolderIsCreatedPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "gpucanary")
	if err := store.Open(dir).Append(map[string]string{"kind": "ENV_ADDED"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("the state folder was created %o, want 700", fi.Mode().Perm())
	}
}
