package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/report"
	"github.com/gpucanary/gpucanary/monitor/store"
	"github.com/gpucanary/gpucanary/output/words"
)

func reportFlags(fs *flag.FlagSet, g *globals) runFunc {
	dir := fs.String("o", "gpucanary-report-"+time.Now().Format("20060102-150405"), "folder to write (new or empty)")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int { return cmdReport(ctx, g, *dir, fs.Args(), std) }
}

// cmdReport writes the evidence bundle into dir.
func cmdReport(ctx context.Context, g *globals, dir string, paths []string, std stdio) int {
	defer warnOverlays(std.err, "report")
	sum, err := writeReport(ctx, g, dir, paths)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary report: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(std.out, "Report written to %s (%s; %s).\n", dir, words.Count(sum.Envs, "environment", "environments"), sum.Jobs)
	return exitOK
}

// writeReport takes the evidence (GPU, environments, processes) and writes
// the bundle into dir; the tray's "Export report…" uses it too. It
// returns the bundle's summary, whose counts the command prints.
func writeReport(ctx context.Context, g *globals, dir string, paths []string) (words.Summary, error) {
	now := time.Now()
	b := g.openGPU()
	defer b.Close()
	scanner := g.processSource()
	if _, err := scanner.Scan(ctx); err != nil {
		g.log.Warn("scanning processes", "err", err)
	}
	found := g.search(ctx, paths)
	res := inspect.Check(ctx, envReader(), b.Snapshot(ctx), found.Found, g.healthOptions())
	res.Complete, res.SearchStopped = found.Complete, found.Stopped
	envs := map[string]*pyenv.Env{}
	for _, e := range res.Envs {
		envs[e.Path] = e.Env
	}
	time.Sleep(psSample)
	ps, err := scanner.Scan(ctx)
	if err != nil {
		g.log.Warn("scanning processes", "err", err)
	}
	rows := inspect.Processes(ps, res.GPU, envs, cudaKernels, g.busyRule(), nil, time.Now(), procs.HostPIDs(""))
	// The summary is the tray's, of the same evidence: the jobs on the
	// GPU (graphics processes aside) and stuck on the CPU, and a search
	// cut short, which the bundle's list of environments does not show.
	sum := words.Summarize(monitor.State{GPU: res.GPU, Envs: res.Envs, Processes: rows, SearchStopped: words.SearchStopped(res)})
	bundle := report.Bundle{Time: now, Version: version, Host: report.ReadHost(), Check: res, Processes: rows, Summary: sum.String(),
		Knowledge: report.Knowledge{AsOf: kb.AsOf(), Overlays: kb.Overlays()}, History: reportHistory()}
	if err := report.Write(dir, bundle); err != nil {
		return words.Summary{}, err
	}
	return sum, nil
}

// reportHistory reads the newest events of the state folder's history
// for the bundle: from the end of the log, as many as the engine keeps at
// least, beside a running engine (a read moves nothing).
func reportHistory() report.History {
	dir, err := store.Dir()
	if err != nil {
		return report.History{Error: err.Error()}
	}
	evs, read, err := store.History[monitor.Event](store.Open(dir), store.HistoryLimit)
	h := report.History{Events: evs, Damaged: read.Damaged}
	if err != nil {
		h.Error = err.Error()
	}
	return h
}
