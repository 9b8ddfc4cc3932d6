//go:build windows

package app

import (
	"os"
	"time"

	"github.com/gpucanary/gpucanary/monitor/nowindow"
)

// openFolder shows path in Explorer, started without a console window
// (package nowindow); it is reaped when it ends.
func openFolder(path string) error {
	cmd := nowindow.Command("explorer", path)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// terminate ends a process (Windows has no SIGTERM; processes are listed
// on Linux only, so start is not checked here).
func terminate(pid int, start time.Time) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
