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

const agentUsage = `Usage: gpucanary agent [--web.listen-address ADDR] [--web.config.file FILE] [--textfile PATH] [PATH...]
       gpucanary agent --collector.processes [--collector.processes.max N] [PATH...]

Runs the engine headless (like watch) and serves what it knows as Prometheus
metrics: /metrics, /-/healthy, and /-/ready (ready once every environment has
been read once). Watches PATH... or, without them, the discovered environments.

Flags:
  --web.listen-address ADDR  where to serve (default ` + prom.DefaultListenAddress + `). Loopback by
                             default because the metrics name this machine's
                             environment paths and processes; a fleet opens it
                             on purpose (":9835"), with --web.config.file.
  --web.config.file FILE     TLS and basic auth, in the Prometheus exporter
                             toolkit's web config format
  --textfile PATH            also keep PATH (a .prom file) up to date for
                             node_exporter's textfile collector, written atomically
  --collector.processes      also export a series per GPU process and per
                             flagged Python process (gpucanary_process_*),
                             with its PID, environment, verdict, container,
                             pod and namespace: a series per job, so off by
                             default (docs/prometheus.md, "Metrics")
  --collector.processes.max N
                             at most N processes get series (default 200),
                             flagged ones first; the rest are counted in
                             gpucanary_process_series_dropped_total
  --gpu-sim FILE             replace NVML with a simulated GPU

Examples:
  gpucanary agent
  gpucanary agent --web.listen-address :9835 --web.config.file /etc/gpucanary/web.yml
  gpucanary agent --textfile /var/lib/prometheus/node-exporter/gpucanary.prom
  gpucanary agent --collector.processes --collector.processes.max 50

Exit status: runs until interrupted (0); 2 on bad flags, a bad web config,
or an address that cannot be listened on (a port in use).
`

// agentFlags declares the agent's flags; its body serves the engine's
// state to Prometheus.
func agentFlags(fs *flag.FlagSet, g *globals) runFunc {
	addr := fs.String("web.listen-address", prom.DefaultListenAddress, "address to serve metrics on")
	webConfig := fs.String("web.config.file", "", "exporter toolkit web config (TLS, basic auth)")
	textfile := fs.String("textfile", "", "also write the metrics to this file for node_exporter")
	perProcess := fs.Bool("collector.processes", false, "export a series per GPU or flagged process")
	perProcessMax := fs.Int("collector.processes.max", prom.DefaultProcessSeriesMax, "the most processes with series of their own")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int {
		if *perProcessMax < 1 {
			fmt.Fprintf(std.err, "gpucanary agent: --collector.processes.max %d: want 1 or more\n", *perProcessMax)
			return exitUsage
		}
		c := agentConfig{addr: *addr, webConfig: *webConfig, textfile: *textfile}
		if *perProcess {
			c.processesMax = *perProcessMax
		}
		return cmdAgent(ctx, g, fs, c, std)
	}
}

// agentConfig is what the agent's flags ask for.
type agentConfig struct {
	addr, webConfig, textfile string
	// processesMax is --collector.processes.max when --collector.processes
	// is given, else 0 (prom.ProcessSeries.Max).
	processesMax int
}

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
