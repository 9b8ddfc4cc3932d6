//go:build !linux && !windows

package tray

import (
	"errors"
	"log/slog"
	"os/exec"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
)

func showNote(present.Note) error {
	return errors.New("desktop notifications are not supported on this platform")
}

func notificationClicks(*slog.Logger) <-chan link.Request { return nil }

func openFolder(path string) error { return exec.Command("open", path).Start() }

func trayHostMissing() bool { return false }

func waitTrayUp() {}
