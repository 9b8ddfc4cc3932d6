package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
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
func cmdWatch(ctx context.Context, g *globals, paths []string, asJSON, all bool, std stdio) int {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(std.err, "gpucanary watch: %v\n", err)
			return exitUsage
		}
	}
	st, releaseState, err := g.openState("watch")
	if err != nil {
		refuseHeldState(std.err, "watch", err)
		return exitUsage
	}
	defer releaseState()
	m, closeEngine := g.newMonitor(paths, st)
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
	if !asJSON {
		fmt.Fprintln(std.err, "gpucanary: watching environments; Ctrl-C stops.")
	}
	p := text.New(std.out, g.getenv)
	for ev := range events {
		if asJSON {
			if err := jsonout.Event(std.out, ev); err != nil {
				fmt.Fprintf(std.err, "gpucanary watch: writing JSON: %v\n", err)
				return exitUsage
			}
			continue
		}
		if all || ev.Notify || ev.Kind == monitor.KindEnvAdded || ev.Kind == monitor.KindEnvRemoved {
			p.Event(ev)
		}
	}
	wg.Wait()
	if runErr != nil {
		fmt.Fprintf(std.err, "gpucanary watch: %v\n", runErr)
		return exitUsage
	}
	return exitOK
}

// newMonitor builds the engine from the settings, remembering in st (nil:
// nothing is remembered); the returned function releases what it opened.
func (g *globals) newMonitor(paths []string, st *store.Store) (*engine.Monitor, func()) {
	b := g.openGPU()
	policy := engine.NewPolicy()
	policy.SetKinds(monitor.Kinds(g.cfg.Notify))
	m := engine.New(engine.Options{
		Paths:     paths,
		Discover:  g.discoverOptions(nil),
		GPU:       b,
		Processes: g.processSource(),
		Busy:      g.busyRule(),
		Health:    g.healthOptions(),
		Interval:  g.cfg.Refresh.Duration,
		Store:     st,
		Policy:    policy,
		Logger:    g.log.With("component", "monitor"),
	})
	return m, func() { b.Close() }
}
