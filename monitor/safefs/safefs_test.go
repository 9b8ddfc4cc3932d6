//go:build !windows

package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestNothingBlocks: a FIFO where a file or a folder is expected is
// refused at once; regular files and folders read as usual.
func TestNothingBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "version.py")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "METADATA")
	if err := os.WriteFile(file, []byte("Version: 2.5.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := ReadFile(fifo, 1024); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(FIFO) = %v, want ErrNotRegular", err)
		}
		if _, err := Open(fifo); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(FIFO) = %v", err)
		}
		if _, err := ReadDir(fifo); err == nil {
			t.Error("ReadDir(FIFO) succeeded")
		}
		if _, err := ReadDir(file); err == nil {
			t.Error("ReadDir(file) succeeded")
		}
		if _, err := Open(dir); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(dir) = %v", err)
		}
		if _, err := Open("/dev/null"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(/dev/null) = %v", err)
		}
		if b, err := ReadFile(file, 1024); err != nil || string(b) != "Version: 2.5.1\n" {
			t.Errorf("ReadFile(file) = %q, %v", b, err)
		}
		if _, err := ReadFile(file, 4); !errors.Is(err, ErrTooLarge) {
			t.Errorf("ReadFile over the limit = %v", err)
		}
		ents, err := ReadDir(dir)
		if err != nil || len(ents) != 2 || ents[0].Name() != "METADATA" {
			t.Errorf("ReadDir(dir) = %v, %v", ents, err)
		}
		if _, err := ReadFile(filepath.Join(dir, "nope"), 10); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("missing file: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a read blocked")
	}
}
