//go:build !windows

package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStateFolderIsPrivate: the state folder holds command lines of the
// user's processes (culprits in the history): 0700, also when an older
// version made it 0755, with its files 0600.
func TestStateFolderIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gpucanary")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Open(dir)
	if err := s.SaveState(State{Envs: map[string]EnvRecord{"/e": {Seen: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(map[string]string{"kind": "CUDA_WHEEL_REPLACED", "culprit": "uv run train.py"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o700 {
		t.Errorf("state folder is %o, want 700", m)
	}
	for _, f := range []string{s.statePath(), s.logPath()} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s is %o, want 600", f, m)
		}
	}
}
