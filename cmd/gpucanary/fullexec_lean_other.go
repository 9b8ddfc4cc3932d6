//go:build lean && !unix

package main

import (
	"errors"
	"fmt"
	"os/exec"
)

// execFull runs the full build with args on this program's standard
// streams and returns its exit status.
func execFull(path string, args []string, std stdio) int {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = std.in, std.out, std.err
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary: running %s: %v\n", path, err)
		return exitUsage
	}
	return exitOK
}
