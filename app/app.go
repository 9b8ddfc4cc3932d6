// Package app is GPU Canary's desktop face: a tray icon that is a status
// light, a menu with each environment's verdict, and (later) notifications
// and windows. It only renders what the engine in package monitor decides;
// no rule or reading lives here.
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
)

// ID is the application ID (FyneApp.toml), which also names its preferences.
const ID = "io.github.gpucanary"

// Deps is what the app needs from the engine. Desktop side effects stay
// injectable so the tray can be tested with Fyne's test app.
type Deps struct {
	// Refresh computes the current state; it is called off the UI goroutine.
	Refresh  func(ctx context.Context) monitor.CheckResult
	Interval time.Duration
	Log      *slog.Logger
}

// ErrNoTray is returned when the desktop has no system tray support.
var ErrNoTray = errors.New("this desktop driver has no system tray")

// Run starts the tray app and blocks until Quit or ctx is cancelled. It must
// be called from the main goroutine (Fyne's rule).
func Run(ctx context.Context, d Deps) error {
	a := fyneapp.NewWithID(ID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.AppIcon))
	desk, ok := a.(desktop.App)
	if !ok {
		return ErrNoTray
	}
	t := newTray(desk, a.Quit)
	t.render(monitor.CheckResult{})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		refreshLoop(ctx, d, func(r monitor.CheckResult) { fyne.Do(func() { t.render(r) }) })
		fyne.Do(a.Quit)
	}()
	a.Run()
	cancel()
	<-done
	return nil
}

// refreshLoop calls d.Refresh now and then every d.Interval until ctx ends,
// handing each result to show.
func refreshLoop(ctx context.Context, d Deps, show func(monitor.CheckResult)) {
	interval := d.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		show(d.Refresh(ctx))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
