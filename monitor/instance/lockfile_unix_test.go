//go:build unix

package instance

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLockStateRefusesWhatIsNotAFile: engine.lock planted as a symlink
// (to a file, or dangling), a FIFO or a folder is refused, and the file a
// symlink points at keeps every byte; a regular lock file is taken.
func TestLockStateRefusesWhatIsNotAFile(t *testing.T) {
	const precious = "the user's file\n"
	cases := []struct {
		name  string
		plant func(t *testing.T, lock, target string)
	}{
		{"symlink to a file", func(t *testing.T, lock, target string) {
			must(t, os.WriteFile(target, []byte(precious), 0o600))
			must(t, os.Symlink(target, lock))
		}},
		{"dangling symlink", func(t *testing.T, lock, target string) { must(t, os.Symlink(target, lock)) }},
		{"fifo", func(t *testing.T, lock, _ string) { must(t, syscall.Mkfifo(lock, 0o600)) }},
		{"folder", func(t *testing.T, lock, _ string) { must(t, os.Mkdir(lock, 0o700)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(t.TempDir(), "victim")
			c.plant(t, filepath.Join(dir, lockName), target)
			l, err := LockState(dir, "watch")
			if err == nil {
				l.Release()
				t.Fatal("LockState took a planted lock file")
			}
			if !errors.Is(err, ErrNotLockFile) {
				t.Errorf("LockState: %v, want ErrNotLockFile", err)
			}
			if b, err := os.ReadFile(target); err == nil && string(b) != precious {
				t.Errorf("the symlink's target now holds %q", b)
			} else if err != nil && !os.IsNotExist(err) {
				t.Error(err)
			}
			if _, err := os.Lstat(target); c.name == "dangling symlink" && err == nil {
				t.Error("the dangling symlink's target was created")
			}
		})
	}
	dir := t.TempDir()
	l, err := LockState(dir, "watch")
	if err != nil {
		t.Fatalf("LockState on a fresh folder: %v", err)
	}
	l.Release()
	l, err = LockState(dir, "watch")
	if err != nil {
		t.Fatalf("LockState on its own lock file: %v", err)
	}
	l.Release()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
