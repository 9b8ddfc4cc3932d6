package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/report"
)

func init() { extraCommands["report"] = cmdReport }

// cmdReport writes the evidence bundle.
func cmdReport(ctx context.Context, g *globals, args []string, std stdio) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(std.err)
	now := time.Now()
	dir := fs.String("o", "gpucanary-report-"+now.Format("20060102-150405"), "folder to write (new or empty)")
	fs.StringVar(&g.gpuSim, "gpu-sim", g.gpuSim, "simulated GPU scenario file")
	fs.Usage = func() { fmt.Fprintln(std.err, "Usage: gpucanary report [-o DIR] [PATH...]") }
	if err := parseInterspersed(fs, args); err != nil {
		return exitUsage
	}
	envs, rows, err := writeReport(ctx, g, *dir, fs.Args())
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary report: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(std.out, "Report written to %s (%d environments, %d GPU workloads).\n", *dir, envs, rows)
	return exitOK
}

// writeReport takes the evidence (GPU, environments, processes) and writes
// the bundle into dir; the tray's "Export report…" uses it too.
func writeReport(ctx context.Context, g *globals, dir string, paths []string) (envCount, procCount int, err error) {
	now := time.Now()
	b := g.openGPU()
	defer b.Close()
	scanner := g.processSource()
	if _, err := scanner.Scan(ctx); err != nil {
		g.log.Warn("scanning processes", "err", err)
	}
	found := g.search(ctx, paths)
	res := monitor.Check(ctx, b.Snapshot(ctx), found.Found, g.healthOptions())
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
	rows := monitor.Processes(ps, res.GPU, envs, g.busyRule(), nil, time.Now())
	bundle := report.Bundle{Time: now, Version: version, Host: report.ReadHost(), Check: res, Processes: rows, Summary: present.CheckSummary(res)}
	if err := report.Write(dir, bundle); err != nil {
		return 0, 0, err
	}
	return len(res.Envs), len(rows), nil
}
