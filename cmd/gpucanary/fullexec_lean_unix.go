//go:build lean && unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execFull replaces this process with the full build running args: it
// returns only when that fails.
func execFull(path string, args []string, std stdio) int {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	fmt.Fprintf(std.err, "gpucanary: running %s: %v\n", path, err)
	return exitUsage
}
