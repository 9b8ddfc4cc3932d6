package app

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/gpucanary/gpucanary/app/link"
)

// ui owns the windows. Every method runs on Fyne's goroutine.
type ui struct {
	app  fyne.App
	d    Deps
	wins *windows
	now  func() time.Time
	// handled counts the requests handled, for the Idle handshake.
	handled int
	// toldProblems is set once Deps.Problems have been shown.
	toldProblems bool
	// shown is set once a window has been shown (Deps.Shown).
	shown bool
	// busy counts repairs running: the process must not end under them.
	busy int
	// life ends when the app shuts down; repairs run under it, and
	// repairs counts them so shutdown can wait for them to stop.
	life    context.Context
	end     context.CancelFunc
	repairs sync.WaitGroup
}

// newUI fills the desktop side effects Deps leaves nil with the platform's.
func newUI(a fyne.App, d Deps) *ui {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.OpenFolder == nil {
		d.OpenFolder = openFolder
	}
	if d.Terminate == nil {
		d.Terminate = terminate
	}
	if d.Clipboard == nil {
		d.Clipboard = func(s string) { a.Clipboard().SetContent(s) }
	}
	u := &ui{app: a, d: d, now: time.Now}
	u.life, u.end = context.WithCancel(context.Background())
	u.wins = newWindows(u)
	return u
}

// render gives the open windows the engine's current state.
func (u *ui) render() { u.wins.refresh(u.d.Engine.State()) }

// handle does what the tray asked for.
func (u *ui) handle(r link.Request) {
	u.handled++
	switch r.Show {
	case link.ShowEnvs:
		u.wins.showEnvs()
		if r.Env != "" {
			u.wins.envs.selectEnv(r.Env)
		}
	case link.ShowProcesses:
		u.wins.showProcesses()
	case link.ShowGPUs:
		u.wins.showGPUs()
	case link.ShowHistory:
		u.wins.showHistory()
	case link.ShowSettings:
		u.wins.showSettings()
	case link.ShowAdd:
		u.wins.addEnvironment()
	case "":
	default:
		u.d.Log.Warn("unknown window asked for", "show", r.Show)
	}
	if r.Repair != "" {
		u.reinstall(r.Repair)
	}
	if r.Keep != "" {
		u.keep(r.Keep)
	}
	u.tellProblems()
	if !u.shown && u.wins.open() > 0 {
		u.shown = true
		if u.d.Shown != nil {
			u.d.Shown()
		}
	}
	u.checkIdle() // a request that opened nothing leaves the process idle
}

// tellProblems shows, once, what is wrong with the files this process
// was started with, over the window just opened.
func (u *ui) tellProblems() {
	if u.toldProblems || len(u.d.Problems) == 0 || u.wins.last == nil {
		return
	}
	u.toldProblems = true
	dialog.ShowInformation("GPU Canary was started with a file it cannot use",
		wrap(strings.Join(u.d.Problems, ". ")+".")+"\n\nThe defaults are in use until it is mended.", u.wins.last)
}

// checkIdle ends this process's part when no window is open and no repair
// runs: the tray is told (it ends the process), or, run alone, it quits.
func (u *ui) checkIdle() {
	if u.busy > 0 || u.wins.open() > 0 {
		return
	}
	if u.d.OnIdle != nil {
		u.d.OnIdle(u.handled)
		return
	}
	quitApp(u.app)
}
