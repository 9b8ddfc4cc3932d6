//go:build !windows

package fatbin

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO named like a library is refused without being opened (an
// open would block until a writer came).
func TestCacheRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libfifo.so")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := (&Cache{}).ReadFile(p); err == nil {
		t.Fatal("a FIFO was read as a library")
	}
}
