package pyenv

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Found is one discovered environment and how it was found, so the UI can
// say why an environment is being watched.
type Found struct {
	Path string `json:"path"`
	// Via is "argument", an active-environment variable ("VIRTUAL_ENV",
	// "CONDA_PREFIX"), "cwd", "root", a manager's Name for its own places
	// ("conda") or "home".
	Via string `json:"via"`
}

// DiscoverOptions bounds and feeds Discover. Zero values mean the process's
// own environment and the default budgets.
type DiscoverOptions struct {
	Paths  []string            // command-line paths: when set, exactly these are returned
	Getenv func(string) string // nil: os.Getenv
	Cwd    string              // "": os.Getwd
	Home   string              // "": os.UserHomeDir
	Roots  []string            // remembered roots (a setting), walked like home
	// MaxDepth, MaxEntries and Timeout bound each walk (defaults 6, 200000
	// and 2 s; Timeout covers the whole call).
	MaxDepth   int
	MaxEntries int
	Timeout    time.Duration
	Logger     *slog.Logger
}

// Defaults for DiscoverOptions' zero values.
const (
	DefaultMaxDepth   = 6
	DefaultMaxEntries = 200_000
	DefaultTimeout    = 2 * time.Second
)

// Discover finds environments. With Paths set it returns exactly those
// (absolute, cleaned, deduplicated). Otherwise it tries, in order, the
// managers' active-environment variables (VIRTUAL_ENV, CONDA_PREFIX), the
// current directory and its children, the remembered roots, each manager's
// own places (conda's folders and environments.txt) and a bounded walk of
// home.
// Environments are deduplicated by real path (the first way found wins) and
// the order is deterministic.
func Discover(ctx context.Context, o DiscoverOptions) []Found {
	found, _ := DiscoverAll(ctx, o)
	return found
}

// DiscoverAll is Discover that also reports whether it looked everywhere:
// complete is false when the time budget or ctx ended a walk, so an
// environment missing from found may still be there. (The entry and depth
// budgets do not count: they stop a walk at the same place every time.)
func DiscoverAll(ctx context.Context, o DiscoverOptions) (found []Found, complete bool) {
	o = o.withDefaults()
	d := &discovery{o: o, seen: map[string]bool{}}
	if len(o.Paths) > 0 {
		for _, p := range o.Paths {
			d.add(p, "argument", false)
		}
		return d.found, true
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, v := range activeVars() {
		if p := strings.TrimSpace(o.Getenv(v)); p != "" {
			d.add(p, v, true)
		}
	}
	if o.Cwd != "" {
		d.add(o.Cwd, "cwd", true)
		d.children(o.Cwd, "cwd")
	}
	for _, r := range o.Roots {
		d.walk(ctx, r, "root")
	}
	w := o.where()
	for _, m := range managers {
		if m.Places == nil {
			continue
		}
		for _, pl := range m.Places(w) {
			for _, p := range pl.envPaths() {
				d.add(p, m.Name, true)
			}
		}
	}
	if o.Home != "" {
		d.walk(ctx, o.Home, "home")
	}
	return d.found, !d.cut
}

// Places are the folders a search with these options looks in and under:
// the active environments, the current directory, the roots, home, and
// each manager's own places that lie outside those. An environment under
// none of them is not found by it.
func (o DiscoverOptions) Places() []string {
	o = o.withDefaults()
	var places []string
	for _, v := range activeVars() {
		if p := strings.TrimSpace(o.Getenv(v)); p != "" {
			places = append(places, p)
		}
	}
	if o.Cwd != "" {
		places = append(places, o.Cwd)
	}
	places = append(places, o.Roots...)
	if o.Home != "" {
		places = append(places, o.Home)
	}
	w := o.where()
	for _, m := range managers {
		if m.Places == nil {
			continue
		}
		for _, pl := range m.Places(w) {
			for _, p := range pl.covers() {
				if !slices.ContainsFunc(places, func(dir string) bool { return within(p, dir) }) {
					places = append(places, p)
				}
			}
		}
	}
	return places
}

// where is what the managers' places are worked out from.
func (o DiscoverOptions) where() Where { return Where{Home: o.Home, Getenv: o.Getenv} }

func (o DiscoverOptions) withDefaults() DiscoverOptions {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Cwd == "" && len(o.Paths) == 0 {
		o.Cwd, _ = os.Getwd()
	}
	if o.Home == "" && len(o.Paths) == 0 {
		o.Home, _ = os.UserHomeDir()
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

type discovery struct {
	o     DiscoverOptions
	seen  map[string]bool // real paths already found
	found []Found
	cut   bool // a walk ran out of time
}

// add records path once by real path; with check it must be an environment.
func (d *discovery) add(path, via string, check bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	if check && !IsEnv(abs) {
		return
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	if d.seen[real] {
		return
	}
	d.seen[real] = true
	d.found = append(d.found, Found{Path: abs, Via: via})
}

// children adds the environments directly inside dir (.venv, .venv-gpu).
func (d *discovery) children(dir, via string) {
	for _, p := range (Place{Path: dir, Holds: HoldsEnvs}).envPaths() {
		d.add(p, via, true)
	}
}
