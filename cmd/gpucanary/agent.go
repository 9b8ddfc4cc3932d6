//go:build !lean

package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/output/prom"
)

// cmdAgent runs the engine and serves its state to Prometheus.
func cmdAgent(ctx context.Context, g *globals, fs *flag.FlagSet, c agentConfig, std stdio) int {
	addr, webConfig, textfile := c.addr, c.webConfig, c.textfile
	for _, p := range fs.Args() {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(std.err, "gpucanary agent: %v\n", err)
			return exitUsage
		}
	}
	if err := prom.ValidateWebConfig(webConfig); err != nil {
		fmt.Fprintf(std.err, "gpucanary agent: --web.config.file: %v\n", err)
		return exitUsage
	}
	if textfile != "" {
		if fi, err := os.Stat(filepath.Dir(textfile)); err != nil || !fi.IsDir() {
			fmt.Fprintf(std.err, "gpucanary agent: --textfile %s: its folder does not exist\n", textfile)
			return exitUsage
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary agent: cannot listen on %s: %v (another agent running? choose another with --web.listen-address)\n", addr, err)
		return exitUsage
	}
	log := g.log.With("component", "agent")
	st, releaseState := g.sharedState("agent")
	defer releaseState()
	m, closeEngine := g.newMonitor(fs.Args(), st)
	defer closeEngine()
	metrics := prom.Options{State: m.State, Version: version, Processes: prom.ProcessSeries{Max: c.processesMax}}
	ready := func() bool { return m.State().Started }
	h, err := prom.NewHandler(prom.HandlerOptions{Metrics: metrics, Ready: ready, Logger: log})
	if err != nil {
		l.Close()
		fmt.Fprintf(std.err, "gpucanary agent: %v\n", err)
		return exitUsage
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var runErr error
	if textfile != "" {
		events, unsubscribe := m.Subscribe()
		defer unsubscribe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			prom.KeepTextfile(ctx, prom.TextfileOptions{Path: textfile, Gatherer: prom.NewRegistry(metrics),
				Ready: ready, Changes: events, Logger: log})
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel() // an engine that stops takes the server with it
		runErr = m.Run(ctx)
	}()
	fmt.Fprintf(std.err, "gpucanary agent: serving metrics on %s/metrics; Ctrl-C stops.\n", l.Addr())
	serveErr := prom.Serve(ctx, l, h, webConfig, log)
	cancel()
	wg.Wait()
	for _, err := range []error{serveErr, runErr} {
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary agent: %v\n", err)
			return exitUsage
		}
	}
	return exitOK
}

// checkSetup is check's flags and body: this build writes metrics itself.
func checkSetup(fs *flag.FlagSet, g *globals) runFunc { return checkFlags(fs, g) }

// checkMetrics writes a check's result as Prometheus metrics: to stdout,
// or atomically to textfile for node_exporter's textfile collector.
func checkMetrics(res monitor.CheckResult, complete bool, began time.Time, textfile string, std stdio) error {
	reg := prom.NewRegistry(prom.Options{
		State:   func() monitor.State { return prom.FromCheck(res, complete, began, time.Since(began)) },
		Version: version,
	})
	if textfile != "" {
		return prom.WriteTextfile(textfile, reg)
	}
	return prom.WriteText(std.out, reg)
}
