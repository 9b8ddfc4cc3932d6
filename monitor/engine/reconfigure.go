package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// Settings are the options a running engine takes again when the user
// changes them (the tray's Settings…, or an edit of the settings file), so
// that a change applies at once rather than at the next start.
type Settings struct {
	Discover envsearch.Options
	Busy     procs.BusyRule
	Health   health.Options
	// Interval is the polling interval; zero keeps the current one.
	Interval time.Duration
	// Kinds are the event kinds that may notify; empty means the default.
	Kinds []monitor.Kind
	// JobMinRuntime is how long a GPU job must have run for its end to
	// be told; zero keeps the current one.
	JobMinRuntime time.Duration
	// StallWindow and StallArmAfter are the stall rules' times (Options);
	// zero keeps the current one.
	StallWindow, StallArmAfter time.Duration
}

// Reconfigure applies s on the engine's goroutine: every environment is
// read again under the new health options, new discovery roots are
// searched and watched, and environments that only a removed root or home
// discovery had found are dropped. Environments added by hand stay.
func (m *Monitor) Reconfigure(s Settings) error {
	return m.request(func(ctx context.Context) { m.reconfigure(ctx, s) })
}

// pendingDrops are the environments a change of discovery roots may no
// longer cover, waiting for a complete discovery to tell (dropUncovered).
type pendingDrops struct {
	// pending says the roots changed and the environments they no longer
	// cover are still to be dropped.
	pending bool
	// removedRoots are the roots (and a former home) dropped since the
	// last complete discovery: their environments go even when a search
	// is cut short.
	removedRoots []string
	// cutWarned says the cut-short search was already told of, once.
	cutWarned bool
}

func (m *Monitor) reconfigure(ctx context.Context, s Settings) {
	rootsChanged := !slices.Equal(m.o.Discover.Roots, s.Discover.Roots) || m.o.Discover.Home != s.Discover.Home
	for _, r := range m.o.Discover.Roots {
		if !slices.Contains(s.Discover.Roots, r) {
			m.drops.removedRoots = append(m.drops.removedRoots, r)
		}
	}
	if h := m.o.Discover.Home; h != "" && h != s.Discover.Home {
		m.drops.removedRoots = append(m.drops.removedRoots, h)
	}
	m.o.Discover = s.Discover
	if s.Busy != (procs.BusyRule{}) {
		m.o.Busy = s.Busy
	}
	m.o.Health = s.Health
	if s.Interval > 0 && s.Interval != m.o.Interval {
		m.o.Interval = s.Interval
		if m.tick != nil {
			m.tick.Reset(s.Interval)
		}
	}
	m.policy.SetKinds(s.Kinds)
	if s.JobMinRuntime > 0 {
		m.o.JobMinRuntime = s.JobMinRuntime
	}
	if s.StallWindow > 0 {
		m.o.StallWindow = s.StallWindow
	}
	if s.StallArmAfter > 0 {
		m.o.StallArmAfter = s.StallArmAfter
	}
	m.log.Info("settings applied", "roots", s.Discover.Roots, "interval", m.o.Interval, "busy", m.o.Busy)
	if rootsChanged && len(m.o.Paths) == 0 {
		m.drops.pending = true
	}
	m.rescan(ctx)
}

// dropUncovered drops the environments that a complete discovery (found)
// no longer finds, except those added by hand. It runs after the roots
// changed. A search cut short by its time budget may have missed
// environments under the places still searched, so then only those under
// a removed root, and under no place still searched, are dropped; the
// rest wait for a complete search.
func (m *Monitor) dropUncovered(ctx context.Context, found []envsearch.Found, complete bool) {
	d := &m.drops
	if !d.pending {
		return
	}
	if !complete || ctx.Err() != nil {
		searched := m.o.Discover.Places()
		for _, path := range m.envs.paths() {
			if e := m.envs.get(path); e.via != viaAdded && underAny(path, d.removedRoots) && !underAny(path, searched) {
				m.removeEnv(path, removedUncovered)
			}
		}
		if !d.cutWarned {
			d.cutWarned = true
			m.log.Warn("discovery ran out of time; environments under the places still searched are kept until a search completes")
		}
		return
	}
	*d = pendingDrops{}
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.Path] = true
	}
	for _, path := range m.envs.paths() {
		if e := m.envs.get(path); !seen[path] && e.via != viaAdded {
			m.removeEnv(path, removedUncovered)
		}
	}
}

// underAny reports whether path is one of dirs or inside one.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
