//go:build nogui

package main

import (
	"context"
	"errors"
	"fmt"
)

// runTray explains that this build has no GUI: gpucanary-cli is the same
// commands without Fyne, for headless servers and containers.
func runTray(_ context.Context, _ *globals, std stdio) int {
	fmt.Fprint(std.err, "gpucanary: this build has no tray (built with -tags nogui); use a command:\n\n"+usageText())
	return exitUsage
}

// guiCommands are the commands only the GUI build has: none here.
func guiCommands() []command { return nil }

// trayUnavailable says why the tray cannot start: this build has none.
func trayUnavailable(func(string) string) error {
	return errors.New("this build has no tray: it was built with -tags nogui")
}
