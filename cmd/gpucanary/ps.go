package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/output/jsonout"
	"github.com/gpucanary/gpucanary/output/text"
)

// processSource is this platform's process source, for a command or the
// engine.
func (g *globals) processSource() procs.Source {
	return procs.NewSource(procs.Options{Logger: g.log.With("component", "procs")})
}

func (g *globals) busyRule() procs.BusyRule {
	return procs.BusyRule{MinCPUPercent: g.cfg.CPUFallbackPercent, Window: g.cfg.CPUFallbackWindow.Duration}
}

// psSample is how long one-shot ps measures CPU %: two scans this far apart.
const psSample = 500 * time.Millisecond

func psFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print JSON")
	watch := fs.Bool("watch", false, "refresh in place every 2 s")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int {
		if fs.NArg() > 0 {
			fmt.Fprintln(std.err, "gpucanary ps: takes no arguments")
			return exitUsage
		}
		return cmdPs(ctx, g, *asJSON, *watch, std)
	}
}

// cmdPs shows per-process GPU use and verdicts.
func cmdPs(ctx context.Context, g *globals, asJSON, watch bool, std stdio) int {
	b := g.openGPU()
	defer b.Close()
	scanner := g.processSource()
	envs := map[string]*pyenv.Env{}
	for _, f := range g.discover(ctx, nil) {
		if e, err := pyenv.Inspect(f.Path); err == nil {
			envs[e.Path] = e
		}
	}
	p := text.New(std.out, g.getenv)
	tracker := (*procs.BusyTracker)(nil)
	if watch {
		tracker = procs.NewBusyTracker()
	}
	if _, err := scanner.Scan(ctx); err != nil {
		fmt.Fprintf(std.err, "gpucanary ps: %v\n", err)
		return exitUsage
	}
	wait := psSample
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-time.After(wait):
		}
		ps, err := scanner.Scan(ctx)
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary ps: %v\n", err)
			return exitUsage
		}
		st := b.Snapshot(ctx)
		rows := monitor.Processes(ps, st, envs, g.busyRule(), tracker, time.Now())
		sortRows(rows)
		if asJSON {
			if err := jsonout.Processes(std.out, st, rows); err != nil {
				fmt.Fprintf(std.err, "gpucanary ps: writing JSON: %v\n", err)
				return exitUsage
			}
		} else {
			if watch {
				fmt.Fprint(std.out, "\x1b[H\x1b[2J")
			}
			p.Processes(st, rows)
		}
		if !watch {
			return exitOK
		}
		wait = 2 * time.Second
	}
}

// sortRows groups by GPU (GPU processes first, by device), then by memory.
func sortRows(rows []monitor.Process) {
	first := func(r monitor.Process) int {
		if len(r.GPUs) == 0 {
			return 1 << 30
		}
		return r.GPUs[0]
	}
	mem := func(r monitor.Process) uint64 {
		if r.GPUMemoryBytes == nil {
			return 0
		}
		return *r.GPUMemoryBytes
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if first(a) != first(b) {
			return first(a) < first(b)
		}
		if mem(a) != mem(b) {
			return mem(a) > mem(b)
		}
		return a.PID < b.PID
	})
}
