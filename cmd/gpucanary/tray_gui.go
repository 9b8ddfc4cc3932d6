//go:build !nogui

package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/gpucanary/gpucanary/app"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// runTray runs the engine in a goroutine and the tray app on this (the
// main) goroutine, as Fyne requires.
func runTray(ctx context.Context, g *globals, std stdio) int {
	m, release := g.newMonitor(nil)
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := m.Run(ctx); err != nil {
			g.log.Error("engine stopped", "err", err)
		}
	}()
	path := g.config
	if path == "" {
		path, _ = config.Path()
	}
	err := app.Run(ctx, app.Deps{
		Monitor: m, Config: g.cfg, ConfigPath: path, Log: g.log.With("component", "app"),
		Repair: repairer{g},
		Export: func(ctx context.Context, dir string) error {
			_, _, err := writeReport(ctx, g, dir, nil)
			return err
		},
	})
	cancel()
	wg.Wait()
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary: %v\n", err)
		return exitUsage
	}
	return exitOK
}
