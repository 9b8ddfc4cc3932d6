//go:build !linux

package procs

import (
	"io"
	"os"
)

// openRaw opens a file; only Linux has /proc, elsewhere this serves tests
// over fixture trees.
func openRaw(path string) (io.ReadCloser, error) { return os.Open(path) }
