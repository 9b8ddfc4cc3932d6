package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/answers"
	"github.com/gpucanary/gpucanary/monitor/fstrace"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
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
			defer warnOverlays(std.err, "check")
			return cmdCheckJSON(ctx, g, fs.Args(), std)
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
	b := g.openGPU()
	defer b.Close()
	began := time.Now()
	found, bad := g.checkTargets(ctx, paths)
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

// encodedReport is one environment's report as `check --json` writes it,
// encoded by the worker that read it, with what the exit status needs.
type encodedReport struct {
	verdict monitor.Verdict
	json    []byte
	err     error
}

// cmdCheckJSON is cmdCheck for `check --json`, written as the
// environments are read: each report is encoded by the worker that read
// it and written in order as soon as those before it are, and then let
// go, so that a check of a thousand environments holds a few reports at
// a time, not all of them and their encoding.
func cmdCheckJSON(ctx context.Context, g *globals, paths []string, std stdio) int {
	b := g.openGPU()
	defer b.Close()
	found, bad := g.checkTargets(ctx, paths)
	res := inspect.Start(b.Snapshot(ctx))
	o, k := g.healthOptions(), g.keeper()
	encode := func(rep monitor.EnvReport) encodedReport {
		markGuard(k, &rep)
		data, err := jsonout.EnvJSON(rep)
		return encodedReport{rep.Verdict, data, err}
	}
	w := jsonout.NewCheckWriter(std.out)
	w.Begin(res)
	var errs bool
	var encErr error
	store, guards := g.answerStore(res.GPU), k.Any()
	inspect.Each(ctx, found.Found,
		func(ctx context.Context, f envsearch.Found) encodedReport {
			subject := ""
			if store != nil {
				subject = answerSubject(k, guards, f)
			}
			if subject == "" {
				return encode(inspect.InspectOne(ctx, f, res.GPU, o))
			}
			if a, ok := store.Get(subject); ok {
				return encodedReport{monitor.Verdict(a.Verdict), a.JSON, nil}
			}
			tr := fstrace.New()
			e := encode(inspect.InspectTraced(ctx, f, res.GPU, o, tr))
			if e.err == nil {
				if err := store.Put(subject, tr, answers.Answer{Verdict: string(e.verdict), JSON: e.json}); err != nil {
					g.log.Debug("answer not kept", "err", err)
				}
			}
			return e
		},
		func(f envsearch.Found, err error) encodedReport { return encode(inspect.Unreadable(f, err)) },
		func(_ int, e encodedReport) bool {
			if e.err != nil {
				encErr = e.err
				return false
			}
			errs = errs || e.verdict == monitor.VerdictError
			w.EnvBytes(e.json)
			return true
		})
	for _, rep := range bad {
		errs = errs || rep.Verdict == monitor.VerdictError
		w.Env(rep)
	}
	res.Findings = append(res.Findings, health.CheckGPUMemory(res.GPU, procs.HostPIDs(""))...)
	res.Complete, res.SearchStopped = found.Complete, found.Stopped
	if err := cmp.Or(encErr, w.End(res)); err != nil {
		fmt.Fprintf(std.err, "gpucanary check: writing JSON: %v\n", err)
		return exitUsage
	}
	if errs || res.HasErrors() {
		return exitFound
	}
	return exitOK
}
