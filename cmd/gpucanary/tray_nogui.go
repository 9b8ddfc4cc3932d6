//go:build nogui

package main

import (
	"context"
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
