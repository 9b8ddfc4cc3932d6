//go:build windows

package app

import (
	"os"
	"os/exec"
	"time"
)

func openFolder(path string) error { return exec.Command("explorer", path).Start() }

// terminate ends a process (Windows has no SIGTERM; processes are listed
// on Linux only, so start is not checked here).
func terminate(pid int, start time.Time) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
