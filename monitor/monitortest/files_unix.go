//go:build !windows

package monitortest

import (
	"syscall"
	"testing"
)

// UnreadableFiles are the ways to plant a file that is there but cannot
// be read, by name: a FIFO (no writer: a plain read would wait forever)
// and a file of limit+1 bytes (SparseFile) for a reader that stops at
// limit. Tests run as root, which reads a chmod 000 file, so that is not
// one of them.
func UnreadableFiles(limit int64) map[string]func(t testing.TB, path string) {
	return map[string]func(t testing.TB, path string){
		"fifo": func(t testing.TB, path string) {
			t.Helper()
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"over the limit": func(t testing.TB, path string) { SparseFile(t, path, limit+1) },
	}
}
