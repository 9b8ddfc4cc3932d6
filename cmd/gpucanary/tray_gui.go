//go:build !nogui

package main

import (
	"context"
	"fmt"

	"github.com/gpucanary/gpucanary/app"
	"github.com/gpucanary/gpucanary/monitor"
)

// runTray starts the tray app over the engine.
func runTray(ctx context.Context, g *globals, std stdio) int {
	b := g.openGPU()
	defer b.Close()
	err := app.Run(ctx, app.Deps{
		Refresh: func(ctx context.Context) monitor.CheckResult {
			return monitor.Check(ctx, b.Snapshot(ctx), g.discover(ctx, nil), g.healthOptions())
		},
		Interval: g.cfg.Refresh.Duration * 5,
		Log:      g.log.With("component", "app"),
	})
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary: %v\n", err)
		return exitUsage
	}
	return exitOK
}
