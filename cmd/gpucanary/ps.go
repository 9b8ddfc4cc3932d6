package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func init() { extraCommands["ps"] = cmdPs }

// processSource is this platform's process source, for a command or the
// engine.
func (g *globals) processSource() procs.Source {
	return procs.NewSource(procs.Options{Logger: g.log.With("component", "procs")})
}

func (g *globals) busyRule() procs.BusyRule {
	return procs.BusyRule{MinCPUPercent: g.cfg.CPUFallbackPercent, Window: g.cfg.CPUFallbackWindow.Duration}
}

// psSample is how long one-shot ps measures CPU %: two scans this far apart.
const psSample = 500 * time.Millisecond

// cmdPs shows per-process GPU use and verdicts.
func cmdPs(ctx context.Context, g *globals, args []string, std stdio) int {
	fs := flag.NewFlagSet("ps", flag.ContinueOnError)
	fs.SetOutput(std.err)
	asJSON := fs.Bool("json", false, "print JSON")
	watch := fs.Bool("watch", false, "refresh in place every 2 s")
	fs.StringVar(&g.gpuSim, "gpu-sim", g.gpuSim, "simulated GPU scenario file")
	fs.Usage = func() { fmt.Fprintln(std.err, "Usage: gpucanary ps [--json] [--watch]") }
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if fs.NArg() > 0 {
			fmt.Fprintln(std.err, "gpucanary ps: takes no arguments")
		}
		return exitUsage
	}
	b := g.openGPU()
	defer b.Close()
	scanner := g.processSource()
	envs := map[string]*pyenv.Env{}
	for _, f := range g.discover(ctx, nil) {
		if e, err := pyenv.Inspect(f.Path); err == nil {
			envs[e.Path] = e
		}
	}
	home, _ := os.UserHomeDir()
	p := printer{w: std.out, colour: colour(std.out, g.getenv), home: home}
	tracker := (*procs.BusyTracker)(nil)
	if *watch {
		tracker = procs.NewBusyTracker()
	}
	if _, err := scanner.Scan(ctx); err != nil {
		fmt.Fprintf(std.err, "gpucanary ps: %v\n", err)
		return exitUsage
	}
	wait := psSample
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-time.After(wait):
		}
		ps, err := scanner.Scan(ctx)
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary ps: %v\n", err)
			return exitUsage
		}
		st := b.Snapshot(ctx)
		rows := monitor.Processes(ps, st, envs, g.busyRule(), tracker, time.Now())
		sortRows(rows)
		if *asJSON {
			if err := writePsJSON(std.out, st, rows); err != nil {
				fmt.Fprintf(std.err, "gpucanary ps: writing JSON: %v\n", err)
				return exitUsage
			}
		} else {
			if *watch {
				fmt.Fprint(std.out, "\x1b[H\x1b[2J")
			}
			p.processes(st, rows)
		}
		if !*watch {
			return exitOK
		}
		wait = 2 * time.Second
	}
}

// psJSON is `ps --json`'s shape: DESIGN.md's processes plus the GPU.
type psJSON struct {
	GPU       gpu.State         `json:"gpu"`
	Processes []monitor.Process `json:"processes"`
}

func writePsJSON(w io.Writer, st gpu.State, rows []monitor.Process) error {
	if rows == nil {
		rows = []monitor.Process{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(psJSON{GPU: st, Processes: rows})
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

// processes prints the nvitop-like table.
func (p printer) processes(st gpu.State, rows []monitor.Process) {
	p.gpu(st)
	for _, d := range st.Devices {
		if d.MemoryTotalBytes > 0 {
			fmt.Fprintf(p.w, "     memory %s\n", bar(d.MemoryUsedBytes, d.MemoryTotalBytes, 30))
		}
	}
	fmt.Fprintln(p.w)
	if len(rows) == 0 {
		fmt.Fprintln(p.w, "No GPU workloads: no process holds GPU memory or has an ML runtime loaded.")
		return
	}
	fmt.Fprintf(p.w, "%-4s %7s %-9s %-22s %9s %4s %6s %8s %8s %-9s %s\n", "GPU", "PID", "USER", "ENVIRONMENT", "GPU-MEM", "SM%", "CPU%", "RSS", "TIME", "VERDICT", "COMMAND")
	now := time.Now()
	for _, r := range rows {
		gpuCol := "-"
		if len(r.GPUs) > 0 {
			gpuCol = fmt.Sprint(r.GPUs[0])
		}
		mem := "n/a"
		if r.GPUMemoryBytes != nil {
			mem = human.Bytes(*r.GPUMemoryBytes)
		}
		sm := "-"
		if r.SMPercent != nil {
			sm = fmt.Sprint(*r.SMPercent)
		}
		env := "-"
		if r.EnvPath != "" {
			env = human.Truncate(p.short(r.EnvPath), 22)
		}
		runtime := "-"
		if !r.StartTime.IsZero() {
			runtime = human.Duration(now.Sub(r.StartTime))
		}
		c := dim
		switch r.Verdict {
		case procs.VerdictGPU:
			c = green
		case procs.VerdictCPU:
			c = red
		case procs.VerdictCUDAIdle:
			c = yellow
		}
		cmd := r.Command()
		fmt.Fprintf(p.w, "%-4s %7d %-9s %-22s %9s %4s %6.1f %8s %8s %s %s\n", gpuCol, r.PID, human.Truncate(r.User, 9), env, mem, sm,
			r.CPUPercent, human.Bytes(r.RSSBytes), runtime, p.paint(c, fmt.Sprintf("%-9s", r.Verdict)), human.Truncate(cmd, 60))
		for _, f := range r.Findings {
			p.finding(f, "     ")
		}
		// Why a workload is off the GPU, unless a finding already says it.
		if r.Verdict != procs.VerdictGPU && len(r.Findings) == 0 && r.Reason != "" {
			fmt.Fprintf(p.w, "     %s\n", p.paint(dim, r.Reason))
		}
	}
}

func bar(used, total uint64, width int) string {
	n := int(float64(used) / float64(total) * float64(width))
	n = max(0, min(width, n))
	return fmt.Sprintf("[%s%s] %s / %s", strings.Repeat("█", n), strings.Repeat("·", width-n), human.Bytes(used), human.Bytes(total))
}
