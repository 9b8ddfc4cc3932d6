// Command fyne-baseline is the peer of the tray's and the windows'
// benchmarks. Without flags it is a Fyne app with a tray icon and a
// one-item menu, doing nothing else: what it costs idle is Fyne's own share
// (its event loop ticks at 60 Hz); what GPU Canary costs beyond it is ours
// (scripts/bench-tray.sh). With -window it shows one window titled so, of
// the Environments window's size, with one label and no tray icon: how
// long that takes to reach the screen is the floor of Fyne on this machine
// under scripts/bench-window.sh.
package main

import (
	"flag"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/assets"
)

func main() {
	title := flag.String("window", "", "show one window with this title instead of a tray icon")
	flag.Parse()
	a := app.NewWithID("io.github.gpucanary.baseline")
	if *title != "" {
		w := a.NewWindow(*title)
		w.SetContent(widget.NewLabel("baseline"))
		w.Resize(fyne.NewSize(980, 600))
		w.ShowAndRun()
		return
	}
	if desk, ok := a.(desktop.App); ok {
		desk.SetSystemTrayIcon(fyne.NewStaticResource("tray.png", assets.TrayHealthy))
		desk.SetSystemTrayMenu(fyne.NewMenu("baseline", fyne.NewMenuItem("Quit", a.Quit)))
	}
	a.Run()
}
