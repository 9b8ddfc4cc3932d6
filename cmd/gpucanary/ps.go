package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/output/jsonout"
	"github.com/gpucanary/gpucanary/output/text"
	"github.com/gpucanary/gpucanary/output/tty"
)

// processSource is this platform's process source, for a command or the
// engine.
func (g *globals) processSource() procs.Source {
	return procs.NewSource(procs.Options{Logger: g.log.With("component", "procs"), WSL: gpu.DetectWSL(gpu.WSLProbe{}) != ""})
}

func (g *globals) busyRule() procs.BusyRule {
	return procs.BusyRule{MinCPUPercent: g.cfg.CPUFallbackPercent, Window: g.cfg.CPUFallbackWindow.Duration}
}

// psSample is how long one-shot ps measures CPU %: two scans this far
// apart; psEvery is how often `ps --watch` refreshes.
const (
	psSample = 500 * time.Millisecond
	psEvery  = 2 * time.Second
)

func psFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print JSON: the host, the time, the GPU and the processes")
	watch := fs.Bool("watch", false, "refresh in place every 2 s, as top does; q quits")
	wide := fs.Bool("w", false, "wide: never cut a line to the terminal's width (as ps -ww); a pipe is never cut")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int { return cmdPs(ctx, g, *asJSON, *watch, *wide, std) }
}

// cmdPs shows per-process GPU use and verdicts; with watch, as a live
// view that a key (q) or Ctrl-C ends.
func cmdPs(ctx context.Context, g *globals, asJSON, watch, wide bool, std stdio) int {
	b := g.openGPU()
	defer b.Close()
	scanner := g.processSource()
	envs := map[string]*pyenv.Env{}
	rd := envReader()
	for _, f := range g.discover(ctx, nil) {
		if e, err := rd.Inspect(f.Path, pyenv.InspectOptions{}); err == nil {
			envs[e.Path] = e
		}
	}
	host, _ := os.Hostname()
	live := watch && !asJSON && tty.IsTerminal(std.out)
	var keys <-chan byte
	if in, ok := std.in.(*os.File); ok && live {
		k, stop, err := tty.Keys(ctx, in)
		if err != nil {
			g.log.Warn("q will not quit; Ctrl-C does", "err", err)
		}
		defer stop()
		keys = k
	}
	tracker := (*procs.BusyTracker)(nil)
	if watch {
		tracker = procs.NewBusyTracker()
	}
	if _, err := scanner.Scan(ctx); err != nil {
		fmt.Fprintf(std.err, "gpucanary ps: %v\n", err)
		return exitUsage
	}
	wait := time.NewTimer(psSample)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case k, ok := <-keys:
			if !ok {
				keys = nil // the terminal went away: Ctrl-C still stops
			} else if k == 'q' || k == 'Q' {
				return exitOK
			}
			continue
		case <-wait.C:
		}
		ps, err := scanner.Scan(ctx)
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary ps: %v\n", err)
			return exitUsage
		}
		now := time.Now()
		st := b.Snapshot(ctx)
		// After the snapshot: a PID it lists that is gone now is no
		// process that started since the scan.
		alive := procs.HostPIDs("")
		rows := inspect.Processes(ps, st, envs, cudaKernels, g.busyRule(), tracker, now, alive)
		sortRows(rows)
		machine := append(health.CheckGPUMemory(st, alive), health.CheckGPUHealth(st)...)
		if asJSON {
			write := jsonout.Processes
			if watch {
				write = jsonout.ProcessesLine // a refresh a line
			}
			if err := write(std.out, host, now, st, rows, machine); err != nil {
				fmt.Fprintf(std.err, "gpucanary ps: writing JSON: %v\n", err)
				return exitUsage
			}
		} else {
			p := text.New(std.out, g.getenv)
			if !wide {
				p.Width = tty.Width(std.out) // each time: the terminal may have been resized
			}
			if live {
				fmt.Fprint(std.out, "\x1b[H\x1b[2J")
			} else if watch {
				fmt.Fprintln(std.out)
			}
			if watch {
				p.Title(now, psEvery, keys != nil)
			}
			p.Processes(st, rows)
			for _, f := range machine {
				p.Finding(f, "")
			}
		}
		if !watch {
			return exitOK
		}
		wait.Reset(psEvery)
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
