//go:build linux

package app

import (
	"os/exec"
	"syscall"
)

// openFolder shows path in the file manager.
func openFolder(path string) error {
	return exec.Command("xdg-open", path).Start()
}

// terminate asks a process to stop.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
