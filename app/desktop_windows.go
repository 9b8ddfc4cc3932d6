//go:build windows

package app

import (
	"os"
	"os/exec"
)

func openFolder(path string) error { return exec.Command("explorer", path).Start() }

// terminate ends a process (Windows has no SIGTERM).
func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
