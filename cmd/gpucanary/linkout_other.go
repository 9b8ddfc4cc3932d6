//go:build !nogui && !linux

package main

import "os"

// takeLinkOut claims standard output for the link to the tray process.
// Here only Go's own writers are turned away from it; the windows process
// has no C code of its own that prints on these systems.
func takeLinkOut() (*os.File, error) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out, nil
}
