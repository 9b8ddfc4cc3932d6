package prom

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// WriteText writes g's metrics in the text exposition format, for a
// person or a pipe (`gpucanary check --format prom`).
func WriteText(w io.Writer, g Gatherer) error {
	fams, err := g.Gather()
	if err != nil {
		return fmt.Errorf("gathering metrics: %w", err)
	}
	if err := writeText(w, fams); err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}

// WriteTextfile writes g's metrics to path for node_exporter's textfile
// collector, atomically (config.ReplaceFile): a temporary file in the
// same folder, whose name does not end in .prom so the collector never
// reads it half written, renamed over path. A path that is a symbolic
// link, as node_exporter setups often have, is written through to its
// target, and the link stays. The file keeps the mode it had (0644, which
// node_exporter can read, when it is new), so a file made readable by
// one group alone stays so.
func WriteTextfile(path string, g Gatherer) error {
	var b bytes.Buffer
	if err := WriteText(&b, g); err != nil {
		return fmt.Errorf("writing metrics to %s: %w", path, err)
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	if err := config.ReplaceFile(path, b.Bytes(), perm); err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}

// FromCheck is the state a one-shot check stands for, so that
// `check --format prom` writes the same metrics as the agent: complete
// says whether the search for environments looked everywhere, began and
// took when and how long the read was. A check watches no processes and
// no files, so there are no process metrics and nothing is degraded.
func FromCheck(r monitor.CheckResult, complete bool, began time.Time, took time.Duration) monitor.State {
	return monitor.State{GPU: r.GPU, Envs: r.Envs, Findings: r.Findings, Started: true,
		DiscoveryComplete: complete, LastRead: began.Add(took), LastReadDuration: took}
}

// TextfileOptions configures KeepTextfile.
type TextfileOptions struct {
	Path     string
	Gatherer Gatherer
	// Ready reports whether the engine has done its first full read:
	// nothing is written before, so a half-read machine never looks
	// healthy.
	Ready func() bool
	// Changes receives the engine's events: each burst rewrites the file
	// at once. It is closed when the engine stops.
	Changes <-chan monitor.Event
	// Every rewrites the file this often anyway, so that timestamps and
	// process metrics stay fresh (default 15s, node_exporter's usual
	// scrape interval).
	Every  time.Duration
	Logger *slog.Logger
}

// readyCheck is how often KeepTextfile looks whether the engine is ready.
const readyCheck = 100 * time.Millisecond

// KeepTextfile keeps o.Path up to date until ctx ends or the engine stops
// (o.Changes is closed). A failed write is logged and tried again at the
// next change or tick: a full disk must not stop the agent.
func KeepTextfile(ctx context.Context, o TextfileOptions) {
	if o.Every <= 0 {
		o.Every = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	write := func() {
		if err := WriteTextfile(o.Path, o.Gatherer); err != nil {
			o.Logger.Warn("writing the metrics textfile", "err", err)
		}
	}
	wait := time.NewTicker(readyCheck)
	for o.Ready != nil && !o.Ready() {
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		case _, ok := <-o.Changes:
			if !ok {
				wait.Stop()
				return
			}
		}
	}
	wait.Stop()
	write()
	tick := time.NewTicker(o.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case _, ok := <-o.Changes:
			if !ok {
				return
			}
			drain(o.Changes)
		}
		write()
	}
}

// drain takes the events already queued, so a burst is one write.
func drain(ch <-chan monitor.Event) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}
