package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/kbrefresh"
)

// cmdKBRefresh reads the index and writes the refresh overlay.
func cmdKBRefresh(ctx context.Context, index string, std stdio) int {
	path, err := kb.RefreshOverlayPath()
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary kb refresh: %v\n", err)
		return exitFound
	}
	res, err := kbrefresh.Run(ctx, nil, index, path, time.Now())
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary kb refresh: %v\n", err)
		return exitFound
	}
	fmt.Fprintf(std.out, "Read %d torch wheels from %s; wrote %s.\n", res.Wheels, res.Page, res.Path)
	if len(res.News) == 0 {
		fmt.Fprintln(std.out, "It lists nothing beyond GPU Canary's built-in facts.")
	}
	for _, n := range res.News {
		fmt.Fprintf(std.out, "  beyond the built-in facts: %s\n", n)
	}
	return exitOK
}

// refreshKnowledge is the engine's daily kb refresh (knowledgeRefresher):
// it reads index's torch page and writes the overlay at path.
func refreshKnowledge(ctx context.Context, index, path string) error {
	_, err := kbrefresh.Run(ctx, nil, index, path, time.Now())
	return err
}

// knowledgeRefresher is the engine's daily kb refresh when the kb_refresh
// setting is on (nil when off): unless the refresh overlay is less than
// a day old, refreshKnowledge writes it. What it learns is read at the
// next start: the tables of a running process are read once.
func (g *globals) knowledgeRefresher() func(context.Context) error {
	if !g.cfg.KBRefresh {
		return nil
	}
	index := g.cfg.IndexBase
	return func(ctx context.Context) error {
		path, err := kb.RefreshOverlayPath()
		if err != nil {
			return err
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) < engine.KnowledgeEvery {
			return nil
		}
		return refreshKnowledge(ctx, index, path)
	}
}
