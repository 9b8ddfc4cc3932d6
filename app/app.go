// Package app is GPU Canary's windows: environments, processes, GPUs, the
// event history and the settings. It runs in its own process, started by
// the tray (package app/tray) when a window is asked for and ended when
// the last one closes: Fyne's driver redraws at 60 Hz while it runs, which
// a resident process cannot afford. It only renders what the engine
// decides; no rule lives here.
package app

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// ID is the application ID (FyneApp.toml), which also names its preferences.
const ID = "io.github.gpucanary"

// Engine is what the windows read and ask of the engine: the link to the
// tray process (link.Tray), or an *engine.Monitor run in this process.
type Engine interface {
	State() monitor.State
	// History is the newest remembered events, at most limit, newest
	// first: the engine reads its log from the end and no further.
	History(limit int) []monitor.Event
	Subscribe() (<-chan monitor.Event, func())
	// Add and Forget fail when the engine (or the tray process that holds
	// it) has stopped.
	Add(path string) error
	Forget(path string) error
	// WatchEnd asks to be told (JOB_ENDED) when the process with this
	// PID and start time ends, whatever its run time.
	WatchEnd(pid int, start time.Time) error
	// QuietJob asks that nothing more be told of the job of the process
	// with this PID and start time until it ends ("Not this job").
	QuietJob(pid int, start time.Time) error
}

// Deps is what the app needs. Desktop side effects that tests replace are
// functions here (evebuddy's pattern); a nil one uses the platform's.
type Deps struct {
	Engine Engine
	// Config is the settings file's content and ConfigPath where it lives
	// (config.Path()); Settings… and Add environment… write it back, and
	// the tray process, watching the file, applies it at once.
	Config     config.Config
	ConfigPath string
	Log        *slog.Logger
	// Samples are the GPU graphs' points collected before this process
	// started. Run asks once, off the main goroutine, before the first
	// window: from the tray they come in its snapshot, which is read
	// while the driver starts (link.Start). nil: none.
	Samples func() present.GPUSamples
	// Requests are the windows to show; Run returns when it is closed.
	Requests <-chan link.Request
	// OnIdle is called when the last window closes, with the number of
	// requests handled; nil quits.
	OnIdle func(handled int)
	// OpenFolder shows a folder in the file manager.
	OpenFolder func(path string) error
	// ReportJob asks for the report on a job that ended, by its PID (the
	// tray writes it and opens its folder): the History window's
	// "Report" on a JOB_ENDED row. nil hides that button.
	ReportJob func(pid int) error
	// Clipboard copies text for the user; nil uses Fyne's clipboard.
	Clipboard func(text string)
	// Terminate asks the process with this PID and start time to stop
	// (SIGTERM on Unix), refusing a PID another process has taken since.
	Terminate func(pid int, start time.Time) error
	// Repair reinstalls a CUDA torch; nil offers the fix command only.
	Repair Repairer
	// Guard keeps an environment's CUDA torch (`gpucanary guard`); nil
	// offers nothing of it.
	Guard Guarder
	// Shown is called once, on Fyne's goroutine, when the first window
	// is on the screen: the windows run alone start their engine then,
	// so that its first read does not take the CPU the window's start
	// needs. nil does nothing.
	Shown func()
	// Started is closed when the engine's first read is done: the open
	// windows render then, rather than at the next refresh. nil when the
	// engine had read before this process started (the tray's).
	Started <-chan struct{}
	// Problems are what is wrong with the files this process was started
	// with (a malformed settings file, a GPU scenario file missing or
	// malformed): shown in a dialog over the first window opened.
	Problems []string
}

// refreshEvery is how often open windows re-read the state.
const refreshEvery = 2 * time.Second

// startGCPercent is the collector's GOGC until the first window is shown.
const startGCPercent = 400

// Run shows the windows d.Requests asks for and blocks until that channel
// is closed or ctx ends. It must be called from the main goroutine
// (Fyne's rule).
func Run(ctx context.Context, d Deps) error {
	a := fyneapp.NewWithID(ID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.AppIcon))
	// The fonts load on this goroutine while the driver starts on the
	// main one; nothing reaches the main goroutine before they have.
	fontsLoaded := make(chan struct{})
	go func() { defer close(fontsLoaded); warmFonts() }()
	// Starting allocates some 30 MB at once (fonts parsed, the driver's
	// caches), which the collector would chase from a 4 MB heap in half a
	// dozen cycles: until the first window is on the screen it runs less
	// often.
	gcPercent := debug.SetGCPercent(startGCPercent)
	shown := d.Shown
	d.Shown = func() {
		debug.SetGCPercent(gcPercent)
		if shown != nil {
			shown()
		}
	}
	u := newUI(a, d)

	events, unsubscribe := d.Engine.Subscribe()
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{}) // closed once a.Run has returned
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-fontsLoaded
		if d.Samples != nil {
			samples := d.Samples()
			fyne.Do(func() { u.wins.samples = samples })
		}
		tick := time.NewTicker(refreshEvery)
		defer tick.Stop()
		requests, started := d.Requests, d.Started
		quit := func() {
			select {
			case <-stopped:
			default:
				fyne.Do(func() { quitApp(a) })
			}
		}
		for {
			select {
			case <-stopped:
				return
			case <-ctx.Done():
				quit()
				return
			case r, ok := <-requests:
				if !ok {
					quit()
					return
				}
				fyne.Do(func() { u.handle(r) })
			case ev, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				fyne.Do(func() { u.wins.event(ev) })
			case <-started:
				started = nil
				fyne.Do(u.render)
			case <-tick.C:
				fyne.Do(u.render)
			}
		}
	}()
	a.Run()
	close(stopped)
	cancel()
	<-done
	u.stopRepairs()
	unsubscribe()
	return nil
}

// quitApp ends a.Run. It stops the driver's loop, as Fyne does itself on
// SIGINT, rather than call a.Quit: a.Quit first marks every window as
// closing, and a pointer event the loop handles before it stops (a window
// that just appeared under the pointer) then dereferences the closed
// window's nil view and crashes the process (Fyne 2.7.2; the same crash is
// fyne-io/fyne#5981). The windows go with the loop's end.
func quitApp(a fyne.App) { a.Driver().Quit() }
