package main

import (
	"context"
	"os"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/kb"
)

// fullName is the full build's file name (without .exe), installed in
// the lean build's folder: make cli builds bin/gpucanary-cli lean
// (-tags nogui,lean, fullexec_lean.go) and bin/gpucanary-full with every
// command's code, which the lean one runs for agent, kb refresh and
// check --format prom.
const fullName = "gpucanary-full"

// knowledgeRefresher is the engine's daily kb refresh when the kb_refresh
// setting is on (nil when off): unless the refresh overlay is less than
// a day old, refreshKnowledge (this build's, or the full build's for the
// lean one) writes it. What it learns is read at the next start: the
// tables of a running process are read once.
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
