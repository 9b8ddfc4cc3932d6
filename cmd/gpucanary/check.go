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

func checkFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print JSON (DESIGN.md's check shape)")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int { return cmdCheck(ctx, g, fs.Args(), *asJSON, std) }
}

// cmdCheck inspects the environments at paths (else the discovered ones)
// and the GPU.
func cmdCheck(ctx context.Context, g *globals, paths []string, asJSON bool, std stdio) int {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(std.err, "gpucanary check: %v\n", err)
			return exitUsage
		}
	}
	b := g.openGPU()
	defer b.Close()
	res := monitor.Check(ctx, b.Snapshot(ctx), g.discover(ctx, paths), g.healthOptions())
	if asJSON {
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
