//go:build !nogui

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/gpucanary/gpucanary/app"
	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/localeenv"
	"github.com/gpucanary/gpucanary/app/session"
	"github.com/gpucanary/gpucanary/app/tray"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/instance"
	"github.com/gpucanary/gpucanary/monitor/nowindow"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// Fyne's packages, which this package imports, are initialized by now:
// the locale variable app/localeenv hid from them goes back to the user's
// value before any command runs or starts a process.
func init() { localeenv.Restore() }

// guiCommands are the commands only the GUI build has: ui, the windows.
func guiCommands() []command {
	return []command{{name: "ui", hidden: true, setup: uiFlags, showsBadInput: true, help: uiHelp,
		summary: "the windows, on their own (the tray starts them with --link)"}}
}

const uiHelp = `Usage: gpucanary ui [--show WINDOW]

Opens GPU Canary's windows on their own, with an engine of their own. The
tray starts them itself, linked to its engine, when a window is asked for.

Flags:
  --show WINDOW        the window to open: envs (the default), processes,
                       gpus, history or settings
  --link               talk to the tray process on stdin and stdout (the
                       tray passes it; not for people)

Examples:
  gpucanary ui
  gpucanary --gpu-sim a100.json ui --show gpus

Exit status: 0 when the last window is closed; 2 without a desktop or on
usage (it takes no arguments).
`

// runEngine runs m in a goroutine; the returned function stops it and
// waits.
func runEngine(ctx context.Context, g *globals, m *engine.Monitor) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := m.Run(ctx); err != nil {
			g.log.Error("engine stopped", "err", err)
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// engineSettings are the settings of cfg in the engine's terms.
func (g *globals) engineSettings(cfg config.Config) engine.Settings {
	next := *g
	next.cfg = cfg
	return engine.Settings{Discover: next.discoverOptions(nil), Busy: next.busyRule(), Health: next.healthOptions(),
		Interval: cfg.Refresh.Duration, Kinds: monitor.Kinds(cfg.Notify), JobMinRuntime: cfg.JobMinRuntime.Duration,
		StallWindow: cfg.StallWindow.Duration, StallArmAfter: cfg.StallArmAfter.Duration}
}

// reconfigure applies changed settings to the running engine.
func (g *globals) reconfigure(m *engine.Monitor, c config.Config) {
	if err := m.Reconfigure(g.engineSettings(c)); err != nil {
		g.log.Warn("settings not applied", "err", err)
	}
}

// runTray is the resident process: the engine and the tray, with the
// windows in a second process started on demand (`gpucanary ui --link`).
func runTray(ctx context.Context, g *globals, std stdio) int {
	// Before anything asks for a session bus (godbus would start one):
	// without a desktop, say so in one line.
	if err := session.ForTray(g.getenv); err != nil {
		fmt.Fprintf(std.err, "gpucanary: %v: the tray needs one; 'gpucanary watch' watches in this terminal instead.\n", err)
		return exitUsage
	}
	raise, quit, leave, err := g.claimSession(ctx)
	if errors.Is(err, instance.ErrRunning) {
		fmt.Fprintf(std.err, "gpucanary: %v\n", err)
		return exitOK
	}
	defer leave()
	var problems []string
	if err := g.simErr(); err != nil {
		problems = append(problems, err.Error())
	}
	st, releaseState := g.sharedState("tray")
	defer releaseState()
	m, release := g.newMonitor(nil, st)
	defer release()
	// Subscribed before the engine runs: the first read's findings are
	// told even when the read ends before the tray host is up.
	events, unsubscribe := m.Subscribe()
	defer unsubscribe()
	stop := runEngine(ctx, g, m)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary: finding this program to start its windows: %v\n", err)
		return exitUsage
	}
	err = tray.Run(ctx, tray.Deps{
		Monitor: m, Events: events, Log: g.log.With("component", "tray"), CanRepair: true,
		WindowsCommand: func() *exec.Cmd {
			cmd := nowindow.Command(exe, append(g.flags(), "ui", "--link")...)
			cmd.Stderr = os.Stderr
			return cmd
		},
		Export: func(ctx context.Context, dir string) error {
			_, err := writeReport(ctx, g, dir, nil)
			return err
		},
		ExportJob: func(ctx context.Context, dir string, pid int) error {
			_, err := writeJobReport(ctx, g, dir, pid)
			return err
		},
		ConfigPath:    g.configPath(),
		Reconfigure:   func(c config.Config) { g.reconfigure(m, c) },
		SettingsError: errText(g.configErr),
		Problems:      problems,
		Raise:         raise,
		QuitAsked:     quit,
		Say:           func(line string) { fmt.Fprintln(std.err, line) },
	})
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// claimSession makes this start the session's one tray (package
// instance): raise then carries a later start's request for the
// Environments window, and quit another process's request that the tray
// quit (`gpucanary quit`), until leave. When another tray holds the
// session, it was asked for its window and err is an
// instance.ErrRunning. A session that cannot be claimed at all is
// logged, and the tray runs.
func (g *globals) claimSession(ctx context.Context) (raise <-chan link.Request, quit <-chan struct{}, leave func(), err error) {
	dir, _ := store.Dir()
	p, err := instance.Claim(dir)
	if errors.Is(err, instance.ErrRunning) {
		return nil, nil, func() {}, err
	}
	if err != nil {
		g.log.Warn("cannot tell whether GPU Canary is already running", "err", err)
		return nil, nil, func() {}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan link.Request)
	quitOut := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		asked := p.Quit
		for {
			select {
			case _, ok := <-p.Raise:
				if !ok {
					return
				}
				select {
				case out <- link.Request{Show: link.ShowEnvs}:
				case <-ctx.Done():
					return
				}
			case _, ok := <-asked:
				if !ok {
					asked = nil
					continue
				}
				select {
				case quitOut <- struct{}{}:
				default: // one already waits
				}
			}
		}
	}()
	return out, quitOut, func() { cancel(); p.Close(); <-done }, nil
}

// flags are the global flags to hand to the windows process.
func (g *globals) flags() []string {
	var out []string
	if g.gpuSim != "" {
		out = append(out, "--gpu-sim", g.gpuSim)
	}
	if g.config != "" {
		out = append(out, "--config", g.config)
	}
	return append(out, "--log-level", g.logLevel)
}

func uiFlags(fs *flag.FlagSet, g *globals) runFunc {
	linked := fs.Bool("link", false, "talk to the tray process on stdin and stdout (the tray passes it)")
	show := fs.String("show", link.ShowEnvs, "the window to open: envs, processes, gpus, history or settings")
	return func(ctx context.Context, std stdio) int { return cmdUI(ctx, g, *linked, *show, std) }
}

// cmdUI runs the windows: linked to the tray process (--link, which the
// tray passes), or on its own with an engine of its own showing show.
func cmdUI(ctx context.Context, g *globals, linked bool, show string, std stdio) int {
	if err := session.ForWindows(g.getenv); err != nil {
		fmt.Fprintf(std.err, "gpucanary ui: %v.\n", err)
		return exitUsage
	}
	repair := g.fixService()
	d := app.Deps{Config: g.cfg, ConfigPath: g.configPath(), Log: g.log.With("component", "app"), Guard: appGuard{g.keeper()}}
	for _, err := range g.badInput() {
		d.Problems = append(d.Problems, err.Error())
	}
	if linked {
		// stdout is the link: nothing else may write there.
		out, err := takeLinkOut()
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary ui: %v\n", err)
			return exitUsage
		}
		// The tray's snapshot is read while Fyne starts; a link that
		// fails ends the run with no window, and says why below.
		t := link.Start(os.Stdin, out)
		d.Engine, d.Samples, d.Requests, d.OnIdle, d.Clipboard, d.ReportJob = t, t.Samples, t.Requests(), t.Idle, t.Copy, t.ReportJob
		// The tray's engine records the repair from its journal, at once.
		repair.Recorded = t.Recorded
		d.Repair = repair
		if err := app.Run(ctx, d); err != nil {
			fmt.Fprintf(std.err, "gpucanary ui: %v\n", err)
			return exitUsage
		}
		if err := t.Err(); err != nil {
			fmt.Fprintf(std.err, "gpucanary ui: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	st, releaseState := g.sharedState("ui")
	defer releaseState()
	m, release := g.newMonitor(nil, st)
	defer release()
	// The engine starts once the first window is on the screen: its first
	// read would take the CPU that the window's start needs (on two cores,
	// under load, that is a tenth of a second). The window says that GPU
	// Canary is starting, and fills when the read is done (d.Started).
	stop := func() {}
	defer func() { stop() }()
	d.Shown = func() { stop = runEngine(ctx, g, m) }
	d.Started = m.Started()
	// Alone, these windows' engine applies their Settings… itself.
	if changes, err := config.Watch(ctx, d.ConfigPath, func(err error) { g.log.Warn("settings not applied", "err", err) }); err == nil {
		go func() {
			for c := range changes {
				g.reconfigure(m, c)
			}
		}()
	}
	requests := make(chan link.Request, 1)
	requests <- link.Request{Show: show}
	repair.Recorded = func(string) { _ = m.ReadJournals() }
	d.Engine, d.Requests, d.Repair = m, requests, repair
	if err := app.Run(ctx, d); err != nil {
		fmt.Fprintf(std.err, "gpucanary ui: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// appGuard is the windows' "Keep this CUDA build…" (app.Guarder): the
// guard `gpucanary guard` sets.
type appGuard struct{ k guard.Keeper }

var _ app.Unguarder = appGuard{}

func (a appGuard) Guard(env string) (pins, lines []string, err error) {
	r, err := a.k.Guard(env)
	return r.Pins, r.Lines, err
}

func (a appGuard) Guarded(env string) bool { return a.k.StateDir != "" && a.k.Read(env).Guarded }

// Unguard is the environments window's guard toggle turned off
// (app.Unguarder): `gpucanary unguard` without --force, so that files
// edited by hand since are left alone and named.
func (a appGuard) Unguard(env string) ([]string, error) {
	r, err := a.k.Unguard(env, false)
	return r.Lines, err
}

// trayUnavailable says why the tray cannot start in this session (no
// desktop, no session bus), nil when it can.
func trayUnavailable(getenv func(string) string) error { return session.ForTray(getenv) }
