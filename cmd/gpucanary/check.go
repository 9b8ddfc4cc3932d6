package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

func checkFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print JSON (DESIGN.md's check shape); the same as --format json")
	format := fs.String("format", "text", "text, json, or prom (Prometheus metrics, as the agent serves them)")
	textfile := fs.String("textfile", "", "with --format prom: write the metrics to this file atomically, for node_exporter's textfile collector")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int {
		if *asJSON && formatGiven(fs) && *format != "json" {
			fmt.Fprintf(std.err, "gpucanary check: --json and --format %s ask for two outputs: give one of them\n", *format)
			return exitUsage
		}
		switch *format {
		case "json":
			*asJSON = true
		case "text", "prom":
		default:
			fmt.Fprintf(std.err, "gpucanary check: --format %q: want text, json or prom\n", *format)
			return exitUsage
		}
		if *textfile != "" && *format != "prom" {
			fmt.Fprintln(std.err, "gpucanary check: --textfile needs --format prom")
			return exitUsage
		}
		out := checkOutput(textOutput(g.getenv))
		switch {
		case *format == "prom":
			out = metricsOutput(*textfile)
		case *asJSON:
			out = newJSONOutput()
		}
		defer warnOverlays(std.err, "check")
		return cmdCheck(ctx, g, fs.Args(), out, std)
	}
}

// formatGiven reports whether --format was given on the command line
// (its default, text, is not a choice that --json contradicts).
func formatGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "format" })
	return given
}

// cmdCheck inspects the environments at paths (else the discovered ones)
// and the GPU, and hands each report to out as soon as it and those
// before it are read (inspect.Each), so that a check of a thousand
// environments whose output streams (JSON) holds a few reports at a
// time. A path that names no environment is reported as an
// ENV_UNREADABLE finding of its own, after the others are read: the exit
// status is 1 when any error finding is raised, a bad path included.
func cmdCheck(ctx context.Context, g *globals, paths []string, out checkOutput, std stdio) int {
	oneShotGC(g.getenv)
	b := g.openGPU()
	defer b.Close()
	began := time.Now()
	found, bad := g.checkTargets(ctx, paths)
	res := inspect.Start(b.Snapshot(ctx))
	o, k, rd := g.healthOptions(), g.keeper(), envReader()
	// A check is a snapshot: each path's status is looked at once.
	rd.Disk = disk.NewOnce(rd.Disk, len(found.Found))
	// Each report is made ready for out (its guard marked, JSON encoded)
	// by the worker that read it: on every core, not after the reads on
	// one.
	ready := func(rep monitor.EnvReport) checkedEnv {
		markGuard(k, &rep)
		return out.prepare(rep)
	}
	out.begin(std, res)
	var errs bool
	var outErr error
	inspect.Each(ctx, found.Found,
		func(ctx context.Context, f envsearch.Found) checkedEnv {
			return ready(inspect.InspectOne(ctx, rd, f, res.GPU, o))
		},
		func(f envsearch.Found, err error) checkedEnv { return ready(inspect.Unreadable(f, err)) },
		func(_ int, e checkedEnv) bool {
			errs = errs || e.verdict == monitor.VerdictError
			outErr = out.env(e)
			return outErr == nil
		})
	for _, rep := range bad {
		errs = errs || rep.Verdict == monitor.VerdictError
		if outErr == nil {
			outErr = out.env(out.prepare(rep))
		}
	}
	res.Findings = append(res.Findings, health.CheckGPUMemory(res.GPU, procs.HostPIDs(""))...)
	res.Complete, res.SearchStopped = found.Complete, found.Stopped
	if err := cmp.Or(outErr, out.end(res, began)); err != nil {
		fmt.Fprintf(std.err, "gpucanary check: %v\n", err)
		return exitUsage
	}
	if errs || res.HasErrors() {
		return exitFound
	}
	return exitOK
}

// checkTargets are the environments a check reads: those at paths, each
// resolved once (a path that names none is a report of its own, bad),
// else the discovered ones.
func (g *globals) checkTargets(ctx context.Context, paths []string) (found envsearch.Discovery, bad []monitor.EnvReport) {
	given, bad, resolved := envArgs(paths, g.getenv)
	found = envsearch.Discovery{Complete: true}
	switch {
	case len(paths) == 0:
		found = g.search(ctx, nil)
	case len(given) > 0:
		// resolved once, above: the search's answer for paths given,
		// without resolving them again
		found = envsearch.Given(given)
		sayResolved(found.Found, resolved)
	}
	return found, bad
}

// oneShotGC lets a check collect garbage less often than a resident
// process does: it is over in tens of milliseconds and its memory goes
// back at exit, and a collection each time the heap doubled was a tenth
// of a 20-environment check's time (docs/performance.md). The memory
// limit still collects before the heap passes oneShotMemory, so a
// thousand environments stay well under what the baseline build needs.
// GOGC or GOMEMLIMIT set by the user are kept.
func oneShotGC(getenv func(string) string) {
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(oneShotMemory)
	}
}

// oneShotMemory is the soft limit of a check's memory.
const oneShotMemory = 48 << 20
