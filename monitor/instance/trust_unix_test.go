//go:build unix

package instance

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/owned"
)

// TestLockStateRefusesUntrustedFolders is issue 42 for the engine lock: a
// state folder or a lock file that another user could have written is
// not locked (its "PID role" is not believed, and the engine would keep
// its history there): the error is an *owned.Untrusted naming it, and
// nothing is written to the lock.
func TestLockStateRefusesUntrustedFolders(t *testing.T) {
	cases := map[string]struct {
		plant func(t *testing.T, dir string)
		bad   string // the path named, under dir
	}{
		"folder writable by others": {func(t *testing.T, dir string) { must(t, os.Chmod(dir, 0o777)) }, ""},
		"lock writable by others": {func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, lockName), []byte("1 tray\n"), 0o600))
			must(t, os.Chmod(filepath.Join(dir, lockName), 0o666))
		}, lockName},
		"folder of another user": {func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a folder to another user needs root")
			}
			must(t, os.Chown(dir, 65534, 65534))
		}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "gpucanary")
			must(t, os.Mkdir(dir, 0o700))
			c.plant(t, dir)
			l, err := LockState(dir, "watch")
			if err == nil {
				l.Release()
				t.Fatal("LockState took an untrusted state folder")
			}
			var u *owned.Untrusted
			if !errors.As(err, &u) || u.Path != filepath.Join(dir, c.bad) {
				t.Fatalf("LockState = %v, want an *owned.Untrusted naming %s", err, filepath.Join(dir, c.bad))
			}
			if data, _ := os.ReadFile(filepath.Join(dir, lockName)); strings.Contains(string(data), "watch") {
				t.Errorf("the lock was written: %q", data)
			}
		})
	}
}
