package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/output/jsonout"
	"github.com/gpucanary/gpucanary/output/text"
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
	res := monitor.Check(ctx, b.Snapshot(ctx), g.discover(ctx, fs.Args()), g.healthOptions())
	if *asJSON {
		if err := jsonout.Check(std.out, res); err != nil {
			fmt.Fprintf(std.err, "gpucanary check: writing JSON: %v\n", err)
			return exitUsage
		}
	} else {
		text.New(std.out, g.getenv).Check(res)
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
