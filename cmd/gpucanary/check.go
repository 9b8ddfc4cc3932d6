package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func cmdCheck(ctx context.Context, g *globals, args []string, std stdio) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(std.err)
	asJSON := fs.Bool("json", false, "print JSON (DESIGN.md's check shape)")
	fs.StringVar(&g.gpuSim, "gpu-sim", g.gpuSim, "simulated GPU scenario file")
	fs.Usage = func() { fmt.Fprintln(std.err, "Usage: gpucanary check [--json] [PATH...]") }
	if err := parseInterspersed(fs, args); err != nil {
		return exitUsage
	}
	for _, p := range fs.Args() {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(std.err, "gpucanary check: %v\n", err)
			return exitUsage
		}
	}
	b := g.openGPU()
	defer b.Close()
	found := g.search(ctx, fs.Args())
	res := monitor.Check(ctx, b.Snapshot(ctx), found.Found, g.healthOptions())
	res.Complete, res.SearchStopped = found.Complete, found.Stopped
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(std.err, "gpucanary check: writing JSON: %v\n", err)
			return exitUsage
		}
	} else {
		home, _ := os.UserHomeDir()
		p := printer{w: std.out, colour: colour(std.out, g.getenv), home: home}
		p.check(res)
	}
	if res.HasErrors() {
		return exitFound
	}
	return exitOK
}

// parseInterspersed parses flags that may come after positional arguments
// ("check ./venv --json"), as people type them.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// printer renders results for a person, with colour only on a terminal.
type printer struct {
	w      io.Writer
	colour bool
	home   string
}

const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	green  = "\x1b[32m"
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

func (p printer) paint(code, s string) string {
	if !p.colour {
		return s
	}
	return code + s + reset
}

// short replaces the home directory with ~ for reading, never for JSON.
func (p printer) short(path string) string {
	if p.home != "" {
		if rel, err := filepath.Rel(p.home, path); err == nil && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return "~"
			}
			return filepath.Join("~", rel)
		}
	}
	return path
}

func (p printer) check(r monitor.CheckResult) {
	p.gpu(r.GPU)
	for _, f := range r.Findings {
		p.finding(f, "  ")
	}
	incomplete := ""
	if !r.Complete {
		incomplete = fmt.Sprintf("Search incomplete: %s. Environments it did not reach are not listed: pass a path (gpucanary check PATH) or add the folder as a root in the settings.",
			orWords(r.SearchStopped, "the search was cut short"))
	}
	if len(r.Envs) == 0 {
		fmt.Fprintln(p.w, "\nNo Python environments found. Pass a path: gpucanary check PATH")
		if incomplete != "" {
			fmt.Fprintln(p.w, p.paint(yellow, incomplete))
		}
		return
	}
	for _, e := range r.Envs {
		p.env(e)
	}
	fmt.Fprintln(p.w)
	fmt.Fprintln(p.w, p.summary(r))
	if incomplete != "" {
		fmt.Fprintln(p.w, p.paint(yellow, incomplete))
	}
}

func (p printer) gpu(g gpu.State) {
	sim := ""
	if g.Simulated {
		sim = p.paint(yellow, " [simulated]")
	}
	if !g.HasDriver() {
		fmt.Fprintf(p.w, "GPU   no NVIDIA driver%s\n", sim)
		return
	}
	fmt.Fprintf(p.w, "GPU   driver %s · CUDA %s%s\n", g.Driver, orDash(g.CUDADriver), sim)
	for _, d := range g.Devices {
		arch := d.Architecture
		if arch != "" {
			arch += ", "
		}
		state := ""
		if d.Asleep {
			state = " · asleep"
		}
		fmt.Fprintf(p.w, "  %d  %s (%ssm_%s) · %s%s\n", d.Index, d.Name, arch,
			strings.ReplaceAll(d.ComputeCapability, ".", ""), human.Bytes(d.MemoryTotalBytes), state)
		if d.Error != "" {
			fmt.Fprintf(p.w, "     %s\n", p.paint(yellow, d.Error))
		}
	}
}

func (p printer) env(e monitor.EnvReport) {
	fmt.Fprintln(p.w)
	head := p.short(e.Path)
	meta := []string{e.Installer}
	if e.Python != "" {
		meta = append(meta, "Python "+e.Python)
	}
	if e.Layout == pyenv.LayoutWindows {
		meta = append(meta, "Windows layout")
	}
	fmt.Fprintf(p.w, "%s  %s  %s\n", p.paint(bold, head), p.paint(dim, "("+strings.Join(meta, ", ")+")"), p.verdict(e.Verdict))
	if e.Via == "argument" && strings.Contains(e.From, "→") {
		fmt.Fprintf(p.w, "  %s\n", p.paint(dim, "resolved: "+e.From))
	}
	for _, name := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio, pyenv.BitsAndBytes, pyenv.LlamaCppPython} {
		if pkg := e.Packages[name]; pkg != nil {
			fmt.Fprintf(p.w, "  %-17s %-22s %s\n", name, pkg.Version, pyenv.Describe(name, pkg))
		}
	}
	if e.Torch() == nil && e.Kind != "" { // an environment that was read
		fmt.Fprintf(p.w, "  %s\n", p.paint(dim, "torch is not installed"))
	}
	for _, f := range e.Findings {
		p.finding(f, "  ")
	}
}

func (p printer) verdict(v monitor.Verdict) string {
	switch v {
	case monitor.VerdictError:
		return p.paint(red, "ERROR")
	case monitor.VerdictWarning:
		return p.paint(yellow, "WARNING")
	case monitor.VerdictOK:
		return p.paint(green, "OK")
	}
	return p.paint(dim, strings.ToUpper(string(v)))
}

func (p printer) finding(f health.Finding, indent string) {
	mark, c := "i", dim
	switch f.Severity {
	case health.SeverityError:
		mark, c = "✗", red
	case health.SeverityWarning:
		mark, c = "!", yellow
	}
	fmt.Fprintf(p.w, "%s%s %s  %s\n", indent, p.paint(c, mark), p.paint(c, f.Code), f.Message)
	if f.Fix != "" {
		fmt.Fprintf(p.w, "%s    fix: %s\n", indent, f.Fix)
	}
}

func (p printer) summary(r monitor.CheckResult) string {
	var bad, warn int
	for _, e := range r.Envs {
		switch e.Verdict {
		case monitor.VerdictError:
			bad++
		case monitor.VerdictWarning:
			warn++
		}
	}
	return fmt.Sprintf("%d environment%s checked: %d with errors, %d with warnings.", len(r.Envs), plural(len(r.Envs)), bad, warn)
}

func orWords(s, words string) string {
	if s == "" {
		return words
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
