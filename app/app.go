// Package app is GPU Canary's desktop face: a tray icon that is a status
// light, a live menu, desktop notifications, and windows for environments,
// processes, GPUs, the event history and the settings. It only renders
// what the engine in package monitor decides; no rule lives here.
package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// ID is the application ID (FyneApp.toml), which also names its preferences.
const ID = "io.github.gpucanary"

// Deps is what the app needs. Desktop side effects that tests replace are
// functions here (evebuddy's pattern); a nil one uses the platform's.
type Deps struct {
	// Monitor is the engine; the caller runs Monitor.Run in a goroutine.
	Monitor *monitor.Monitor
	// Config is the settings file's content and ConfigPath where it lives
	// (config.Path()); Settings… and Add environment… write it back, so
	// the command line sees what the tray changed.
	Config     config.Config
	ConfigPath string
	Log        *slog.Logger
	// Export writes the evidence bundle into dir; nil makes "Export
	// report…" do nothing.
	Export func(ctx context.Context, dir string) error
	// Notify shows a desktop notification; nil uses Fyne's
	// (the freedesktop Notifications service on Linux).
	Notify func(title, body string)
	// OpenFolder shows a folder in the file manager.
	OpenFolder func(path string) error
	// Clipboard copies text for the user; nil uses Fyne's clipboard.
	Clipboard func(text string)
	// Tooltip sets the tray tooltip (Fyne's tray API has none).
	Tooltip func(string)
	// Terminate asks a process to stop (SIGTERM on Unix).
	Terminate func(pid int) error
	// Repair reinstalls a CUDA torch ("Reinstall CUDA torch…"); nil hides
	// the entry and offers "Copy fix command" only.
	Repair Repairer
}

// ErrNoTray is returned when the desktop driver has no system tray.
var ErrNoTray = errors.New("this desktop driver has no system tray")

// refreshEvery is how often open windows and the tray re-read the state.
const refreshEvery = 2 * time.Second

// Run starts the tray app and blocks until Quit or ctx ends. It must be
// called from the main goroutine (Fyne's rule). The caller runs
// d.Monitor.Run in a goroutine of its own.
func Run(ctx context.Context, d Deps) error {
	a := fyneapp.NewWithID(ID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.AppIcon))
	desk, ok := a.(desktop.App)
	if !ok {
		return ErrNoTray
	}
	if d.Tooltip == nil {
		d.Tooltip = setTooltip
	}
	u := newUI(a, desk, d)
	u.render()
	if trayHostMissing() {
		// No tray host on this desktop (a StatusNotifierWatcher is needed):
		// say so in a window rather than run invisibly.
		d.Log.Warn("no system tray host (org.kde.StatusNotifierWatcher) on the session bus; showing the Environments window")
		u.wins.showEnvs()
	}

	events, unsubscribe := d.Monitor.Subscribe()
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{}) // closed once a.Run has returned
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(refreshEvery)
		defer tick.Stop()
		for {
			select {
			case <-stopped:
				return
			case <-ctx.Done():
				select {
				case <-stopped:
				default:
					fyne.Do(a.Quit)
				}
				return
			case ev, ok := <-events:
				if !ok {
					return
				}
				fyne.Do(func() { u.onEvent(ev) })
			case <-tick.C:
				fyne.Do(u.render)
			}
		}
	}()
	a.Run()
	close(stopped)
	cancel()
	<-done
	unsubscribe()
	return nil
}
