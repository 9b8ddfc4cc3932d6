package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/output/jsonout"
	"github.com/gpucanary/gpucanary/output/text"
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
		out := checkText
		switch {
		case *format == "prom":
			out = func(res monitor.CheckResult, complete bool, began time.Time, std stdio, _ func(string) string) error {
				return checkMetrics(res, complete, began, *textfile, std)
			}
		case *asJSON:
			out = func(res monitor.CheckResult, _ bool, _ time.Time, std stdio, _ func(string) string) error {
				if err := jsonout.Check(std.out, res); err != nil {
					return fmt.Errorf("writing JSON: %w", err)
				}
				return nil
			}
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

// checkOutput writes a check's result (text, JSON or metrics).
type checkOutput func(res monitor.CheckResult, complete bool, began time.Time, std stdio, getenv func(string) string) error

func checkText(res monitor.CheckResult, _ bool, _ time.Time, std stdio, getenv func(string) string) error {
	text.New(std.out, getenv).Check(res)
	return nil
}

// cmdCheck inspects the environments at paths (else the discovered ones)
// and the GPU. A path that names no environment is reported as an
// ENV_UNREADABLE finding of its own, after the others are read: the exit
// status is 1 when any error finding is raised, a bad path included.
func cmdCheck(ctx context.Context, g *globals, paths []string, out checkOutput, std stdio) int {
	given, bad, resolved := envArgs(paths, g.getenv)
	b := g.openGPU()
	defer b.Close()
	began := time.Now()
	found := pyenv.Discovery{Complete: true}
	switch {
	case len(paths) == 0:
		found = g.search(ctx, nil)
	case len(given) > 0:
		// resolved once, above: the search's answer for paths given,
		// without resolving them again
		found = pyenv.Given(given)
		sayResolved(found.Found, resolved)
	}
	res := inspect.Check(ctx, b.Snapshot(ctx), found.Found, g.healthOptions())
	res.Findings = append(res.Findings, health.CheckGPUMemory(res.GPU, procs.HostPIDs(""))...)
	res.Complete, res.SearchStopped = found.Complete, found.Stopped
	g.markGuarded(res.Envs)
	res.Envs = append(res.Envs, bad...)
	if err := out(res, found.Complete, began, std, g.getenv); err != nil {
		fmt.Fprintf(std.err, "gpucanary check: %v\n", err)
		return exitUsage
	}
	if res.HasErrors() {
		return exitFound
	}
	return exitOK
}
