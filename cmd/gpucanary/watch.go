package main

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/store"
	"github.com/gpucanary/gpucanary/output/jsonout"
	"github.com/gpucanary/gpucanary/output/text"
)

func watchFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print one JSON object a line")
	all := fs.Bool("all", false, "print every event, not only those the notification policy would show")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int { return cmdWatch(ctx, g, fs.Args(), *asJSON, *all, std) }
}

// cmdWatch runs the engine headless and prints each event as it happens.
// A path given that names no environment is printed first, as the
// FINDING_RAISED event of its ENV_UNREADABLE finding, and the others are
// watched; the exit status is then 1, at once when no path is left to
// watch.
func cmdWatch(ctx context.Context, g *globals, paths []string, asJSON, all bool, std stdio) int {
	given, bad, _ := envArgs(paths, g.getenv)
	p := text.New(std.out, g.getenv)
	for _, r := range bad {
		for _, f := range r.Findings {
			ev := monitor.Event{Time: time.Now(), Kind: monitor.KindFindingRaised, Env: r.Path, Message: f.Message, Finding: &f, Notify: true}
			if asJSON {
				if err := jsonout.Event(std.out, ev); err != nil {
					fmt.Fprintf(std.err, "gpucanary watch: writing JSON: %v\n", err)
					return exitUsage
				}
				continue
			}
			p.Event(ev)
		}
	}
	code := exitOK
	if len(bad) > 0 {
		code = exitFound
		if len(given) == 0 {
			return exitFound
		}
	}
	st, releaseState, err := g.openState("watch")
	if err != nil {
		refuseHeldState(std.err, "watch", err)
		return exitUsage
	}
	defer releaseState()
	m, closeEngine := g.newMonitor(argPaths(given), st, given...)
	defer closeEngine()
	events, unsubscribe := m.Subscribe()
	defer unsubscribe()

	var wg sync.WaitGroup
	wg.Add(1)
	var runErr error
	go func() {
		defer wg.Done()
		runErr = m.Run(ctx)
	}()
	if asJSON {
		for ev := range events {
			if err := jsonout.Event(std.out, ev); err != nil {
				fmt.Fprintf(std.err, "gpucanary watch: writing JSON: %v\n", err)
				return exitUsage
			}
		}
	} else {
		fmt.Fprintln(std.err, "gpucanary: watching environments; Ctrl-C stops.")
		printWatch(p, m, events, all)
	}
	wg.Wait()
	if runErr != nil {
		fmt.Fprintf(std.err, "gpucanary watch: %v\n", runErr)
		return exitUsage
	}
	return code
}

// printWatch prints, once the engine's first read is done, what it
// watches (the GPU, each environment and how it was found), then every
// event the notification policy shows (all: every event). The events of
// the first read come after that summary; their ENV_ADDED lines, which
// the summary already lists, only with all.
func printWatch(p text.Printer, m startedState, events <-chan monitor.Event, all bool) {
	show := func(ev monitor.Event) {
		if all || ev.Notify || ev.Kind == monitor.KindEnvAdded || ev.Kind == monitor.KindEnvRemoved {
			p.Event(ev)
		}
	}
	var first []monitor.Event
	// listed are the environments the summary named: the first read's
	// ENV_ADDED for one of them may still be on its way when the summary
	// is printed, and is not said again.
	listed := map[string]bool{}
	started, stopped := m.Started(), false
	for started != nil && !stopped {
		select {
		case ev, ok := <-events:
			if !ok {
				stopped = true // ended before its first read was done
				break
			}
			first = append(first, ev)
		case <-started:
			st := m.State()
			p.Watching(st)
			for _, e := range st.Envs {
				listed[e.Path] = true
			}
			started = nil
		}
	}
	again := func(ev monitor.Event) bool {
		if ev.Kind != monitor.KindEnvAdded || all {
			return false
		}
		if listed[ev.Env] {
			delete(listed, ev.Env) // added again later (removed, then back) is news
			return true
		}
		return false
	}
	for _, ev := range first {
		if !again(ev) && (ev.Kind != monitor.KindEnvAdded || all) {
			show(ev)
		}
	}
	for ev := range events {
		if !again(ev) {
			show(ev)
		}
	}
}

// startedState is what printWatch needs of the engine: when its first
// read is done, and its state then.
type startedState interface {
	Started() <-chan struct{}
	State() monitor.State
}

// newMonitor builds the engine from the settings over the environments at
// paths (nil: discovered ones), remembering in st (nil: nothing is
// remembered); the returned function releases what it opened. given,
// when the command resolved paths already (envArgs), are those
// resolutions, so the engine does not resolve them again.
func (g *globals) newMonitor(paths []string, st *store.Store, given ...managers.Resolution) (*engine.Monitor, func()) {
	b := g.openGPU()
	// The repairs' journals are read by the engine that owns the state
	// folder (the only writer of its history).
	journals := ""
	if st != nil {
		if dir, err := store.Dir(); err == nil {
			journals = journalDir(dir)
		}
	}
	policy := engine.NewPolicy()
	policy.SetKinds(monitor.Kinds(g.cfg.Notify))
	m := engine.New(engine.Options{
		Paths:     paths,
		Given:     given,
		Discover:  g.discoverOptions(nil),
		GPU:       b,
		Reader:    envReader(),
		Processes: g.processSource(),
		Alive:     procs.HostPIDs(""),
		Busy:      g.busyRule(),
		Health:    g.healthOptions(),
		GPUHealth: health.GPUWatchOptions{ThrottleWindow: g.cfg.ThrottleWindow.Duration, PCIeWindow: g.cfg.PCIeWindow.Duration, XidHold: g.cfg.XidHold.Duration,
			SpillWindow: g.cfg.SpillWindow.Duration},
		Interval: g.cfg.Refresh.Duration,
		Store:    st,
		Journals: journals,
		Guards:   g.keeper().StateDir,
		Policy:   policy,
		Logger:   g.log.With("component", "monitor"),

		RefreshKnowledge: g.knowledgeRefresher(),
		JobMinRuntime:    g.cfg.JobMinRuntime.Duration,
		StallWindow:      g.cfg.StallWindow.Duration,
		StallArmAfter:    g.cfg.StallArmAfter.Duration,
	})
	return m, func() { b.Close() }
}
