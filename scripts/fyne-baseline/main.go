// Command fyne-baseline is the peer of the tray's idle benchmark: a Fyne
// app with a tray icon and a one-item menu, doing nothing else. What it
// costs idle is Fyne's own share (its event loop ticks at 60 Hz); what
// GPU Canary costs beyond it is ours. scripts/bench-tray.sh runs both.
package main

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/gpucanary/gpucanary/assets"
)

func main() {
	a := app.NewWithID("io.github.gpucanary.baseline")
	if desk, ok := a.(desktop.App); ok {
		desk.SetSystemTrayIcon(fyne.NewStaticResource("tray.png", assets.TrayHealthy))
		desk.SetSystemTrayMenu(fyne.NewMenu("baseline", fyne.NewMenuItem("Quit", a.Quit)))
	}
	a.Run()
}
