package main

import (
	"context"
	"flag"
	"fmt"
)

// The agent's defaults, as output/prom names them (prom.DefaultListenAddress,
// prom.DefaultProcessSeriesMax; TestAgentDefaultsArePrometheus): the
// agent's flags and help are in every build, and the lean one
// (fullexec_lean.go) links no Prometheus code.
const (
	agentListenDefault = "localhost:9835"
	agentProcessesMax  = 200
)

const agentUsage = `Usage: gpucanary agent [--web.listen-address ADDR] [--web.config.file FILE] [--textfile PATH] [PATH...]
       gpucanary agent --collector.processes [--collector.processes.max N] [PATH...]

Runs the engine headless (like watch) and serves what it knows as Prometheus
metrics: /metrics, /-/healthy, and /-/ready (ready once every environment has
been read once). Watches PATH... or, without them, the discovered environments.

Flags:
  --web.listen-address ADDR  where to serve (default ` + agentListenDefault + `). Loopback by
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
	addr := fs.String("web.listen-address", agentListenDefault, "address to serve metrics on")
	webConfig := fs.String("web.config.file", "", "exporter toolkit web config (TLS, basic auth)")
	textfile := fs.String("textfile", "", "also write the metrics to this file for node_exporter")
	perProcess := fs.Bool("collector.processes", false, "export a series per GPU or flagged process")
	perProcessMax := fs.Int("collector.processes.max", agentProcessesMax, "the most processes with series of their own")
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
