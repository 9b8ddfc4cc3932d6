//go:build windows

package tray

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/nowindow"
)

// openFolder shows path in Explorer, started without a console window
// (package nowindow); it is reaped when it ends.
func openFolder(path string) error {
	cmd := nowindow.Command("explorer", path)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	go cmd.Wait()
	return nil
}

// trayHostMissing: Windows always has a notification area.
func trayHostMissing() bool { return false }

// waitTrayUp: the notification area is ready when systray says so.
func waitTrayUp() {}
