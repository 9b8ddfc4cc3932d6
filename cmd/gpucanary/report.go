package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
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
	job := fs.String("job", "", "write what happened to the job with this PID instead")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int {
		if *job != "" {
			return cmdReportJob(ctx, g, *dir, *job, fs.Args(), std)
		}
		return cmdReport(ctx, g, *dir, fs.Args(), std)
	}
}

// cmdReportJob writes what happened to one job into dir: from the record
// the engine (the tray, `watch`, `agent`) kept in the state folder when
// the job ended; for a job still running, what is known of it now, and
// that its samples come once it has ended. A PID that is no number, or
// no job's, is exit status 2.
func cmdReportJob(ctx context.Context, g *globals, dir, arg string, paths []string, std stdio) int {
	pid, err := strconv.Atoi(arg)
	if err != nil || pid <= 0 {
		fmt.Fprintf(std.err, "gpucanary report: --job takes a process ID (a number above 0), not %q\n", arg)
		return exitUsage
	}
	if len(paths) > 0 {
		fmt.Fprintf(std.err, "gpucanary report: --job takes no environment paths (the job's own environment is reported)\n")
		return exitUsage
	}
	b, err := writeJobReport(ctx, g, dir, pid)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary report: %v\n", err)
		return exitUsage
	}
	if b.Running != nil {
		fmt.Fprintf(std.out, "Report written to %s (job %d is still running: its samples are recorded by the tray or `gpucanary watch` and written when it ends).\n", dir, pid)
		return exitOK
	}
	fmt.Fprintf(std.out, "Report written to %s (job %d, %s; %d samples).\n", dir, pid, b.Record.Ended.Job.How, len(b.Record.Samples))
	return exitOK
}

// writeJobReport writes what happened to the job pid into dir and
// returns what it wrote; the tray's "Report" on a JOB_ENDED notification
// and History row uses it too. The error says why there is nothing to
// write (a PID that is no job's) or why it could not be written.
func writeJobReport(ctx context.Context, g *globals, dir string, pid int) (report.JobBundle, error) {
	b := report.JobBundle{Time: time.Now(), Version: version, Host: report.ReadHost(), PID: pid}
	stateDir, err := store.Dir()
	if err != nil {
		return b, fmt.Errorf("finding the state folder: %w", err)
	}
	st := store.Open(stateDir)
	rec, ok, err := store.Job[monitor.JobRecord](st, pid)
	if err != nil {
		g.log.Warn("reading the job records", "err", err)
	}
	switch {
	case ok && rec.Ended.Job != nil:
		b.Record = &rec
		evs, _, herr := store.History[monitor.Event](st, store.HistoryLimit)
		if herr != nil {
			b.HistoryError = herr.Error()
		}
		b.Events = report.EventsNear(evs, rec.Ended.Time)
	default:
		p, runs := runningProcess(ctx, g, pid)
		if runs && p == nil {
			return b, fmt.Errorf("process %d runs but is not a job GPU Canary follows (on a GPU, or a Python or ML process): there is nothing to report", pid)
		}
		if p == nil {
			why := ""
			if err != nil {
				why = fmt.Sprintf(" (%v)", err)
			}
			return b, fmt.Errorf("no job with PID %d: no process runs with it, and the state folder %s holds no record of a job with it that ended%s "+
				"(the tray, `gpucanary watch` or `gpucanary agent` keeps the last %d jobs' records while it runs)", pid, stateDir, why, store.JobsKept)
		}
		b.Running = p
	}
	return b, report.WriteJob(dir, b)
}

// runningProcess is the process pid as ps sees it now (its command
// redacted, its environment and verdict); nil when none runs (runs
// false) or when it is no job ps lists (runs true).
func runningProcess(ctx context.Context, g *globals, pid int) (p *monitor.Process, runs bool) {
	b := g.openGPU()
	defer b.Close()
	scanner := g.processSource()
	ps, err := scanner.Scan(ctx)
	if err != nil {
		g.log.Warn("scanning processes", "err", err)
		return nil, false
	}
	for _, p := range ps {
		runs = runs || p.PID == pid
	}
	if !runs {
		return nil, false
	}
	rows := inspect.Processes(ps, b.Snapshot(ctx), nil, cudaKernels, g.busyRule(), nil, time.Now(), procs.HostPIDs(""))
	for i := range rows {
		if rows[i].PID == pid {
			return &rows[i], true
		}
	}
	return nil, true
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
