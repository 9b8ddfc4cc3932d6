package envsearch

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// Found is one discovered environment and how it was found, so the UI can
// say why an environment is being watched.
type Found struct {
	Path string `json:"path"`
	// Via is "argument", an active-environment variable ("VIRTUAL_ENV",
	// "CONDA_PREFIX"), "cwd", "root", a manager's Name for its own places
	// ("conda", "poetry", "jupyter", "system"), "home" or "remembered".
	Via string `json:"via"`
	// From says what pointed there: the variable, config file or default
	// a manager's place came from, the kernel.json of a Jupyter kernel,
	// or for a path argument or the current folder the resolution
	// ("./ → ./.venv (uv project)").
	From string `json:"from,omitempty"`
	// Create is set when Path is a project folder whose environment does
	// not exist yet: how to create it ("uv sync"); From is then the
	// project's rule ("uv project").
	Create string `json:"create,omitempty"`
	// Missing is set when what pointed here names an interpreter that
	// does not exist (a Jupyter kernel's argv[0]): Path is where its
	// environment would be, and there is nothing to read.
	Missing string `json:"missing,omitempty"`
}

// Options bounds and feeds Search. Zero values mean the process's
// own environment and the default budgets.
type Options struct {
	Paths  []string            // command-line paths: when set, exactly these are returned, resolved (Resolve)
	Getenv func(string) string // nil: os.Getenv
	Cwd    string              // "": os.Getwd
	Home   string              // "": os.UserHomeDir
	Roots  []string            // remembered roots (a setting), walked like home
	// Remembered are environments earlier searches found (the engine's
	// store): when a budget cuts this search short, each one it did not
	// find that is still an environment is reported (via "remembered"),
	// so what was watched before is still read.
	Remembered []string
	// System, when not nil, replaces the platform's system-wide places
	// (Where.System): tests name their own, or none.
	System []string
	// MaxDepth, MaxEntries and Timeout bound each walk (defaults 12,
	// 200000 and 2 s; Timeout covers the whole call).
	MaxDepth   int
	MaxEntries int
	Timeout    time.Duration
	Logger     *slog.Logger
}

// Defaults for Options' zero values.
const (
	DefaultMaxDepth   = 12
	DefaultMaxEntries = 200_000
	DefaultTimeout    = 2 * time.Second
)

// Discovery is one search's answer.
type Discovery struct {
	Found []Found
	// Complete is false when a budget (time, entries, or ctx) ended a
	// walk before it had looked everywhere: an environment missing from
	// Found may still be there.
	Complete bool
	// Stopped says, when the search is not complete, what ended it and
	// where.
	Stopped string
}

// Search finds environments. With Paths set it returns exactly those,
// each resolved (Resolve: a project folder to its environment, an
// interpreter to its prefix). Otherwise it tries, in order, the managers'
// active-environment variables (VIRTUAL_ENV, CONDA_PREFIX), the current
// folder (as an environment or a project) and its children, the
// remembered roots, each manager's own places (conda's envs_dirs,
// Poetry's virtualenvs, pyenv's versions, Jupyter's kernels, the system's
// interpreters, the one-click apps' folders, ...), a walk of home that
// looks where environments are likely first, then the walks of the
// folders outside home that apps are unpacked into (a Windows drive's
// root), and last, when a budget cut the search short, the environments
// earlier searches remembered.
// Environments are deduplicated by real path (the first way found wins)
// and the order is deterministic.
func Search(ctx context.Context, o Options) Discovery {
	o = o.withDefaults()
	d := &discovery{o: o, seen: map[string]bool{}}
	w := o.where()
	if len(o.Paths) > 0 {
		for _, p := range o.Paths {
			r, err := Resolve(p, w)
			if err != nil {
				r = managers.Resolution{Arg: p} // read, and reported, as given
			}
			d.given(r)
		}
		return Discovery{Found: d.found, Complete: true}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, v := range managers.ActiveVars() {
		if p := strings.TrimSpace(o.Getenv(v)); p != "" {
			d.add(Found{Path: p, Via: v}, true)
		}
	}
	if o.Cwd != "" {
		if r, err := Resolve(o.Cwd, w); err == nil && r.Env != "" {
			d.add(Found{Path: r.Env, Via: "cwd", From: r.Line()}, true)
		}
		d.children(o.Cwd, "cwd")
	}
	for _, r := range o.Roots {
		d.walk(ctx, r, "root")
	}
	// The folders to walk outside home (a drive's root) are walked after
	// home, which holds most environments, so their budgets come last.
	var later []viaPlace
	for _, m := range table {
		if m.Places == nil {
			continue
		}
		for _, pl := range m.Places(w) {
			if pl.Holds == managers.HoldsTree {
				// the walks of the folders apps are unpacked into go with
				// the walk of home: a search without it walks none
				if o.Home == "" {
					continue
				}
				if !within(pl.Path, o.Home) {
					later = append(later, viaPlace{pl, m.Name})
					continue
				}
				d.walkPlace(ctx, pl, m.Name)
				continue
			}
			for _, c := range candidates(pl) {
				d.add(Found{Path: c.path, Via: m.Name, From: c.from, Missing: c.missing}, c.missing == "")
			}
		}
	}
	if o.Home != "" {
		d.walk(ctx, o.Home, "home")
	}
	for _, l := range later {
		d.walkPlace(ctx, l.Place, l.via)
	}
	if d.stopped != "" {
		for _, p := range o.Remembered {
			d.add(Found{Path: p, Via: "remembered"}, true)
		}
	}
	return Discovery{Found: d.found, Complete: d.stopped == "", Stopped: d.stopped}
}

// Places are the folders a search with these options looks in and under:
// the active environments, the current directory, the roots, home, and
// each manager's own places that lie outside those. An environment under
// none of them is not found by it.
func (o Options) Places() []string {
	o = o.withDefaults()
	var places []string
	for _, v := range managers.ActiveVars() {
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
	for _, m := range table {
		if m.Places == nil {
			continue
		}
		for _, pl := range m.Places(w) {
			for _, p := range covers(pl) {
				if exists(p) && !slices.ContainsFunc(places, func(dir string) bool { return within(p, dir) }) {
					places = append(places, p)
				}
			}
		}
	}
	return places
}

// where is what the managers' places are worked out from.
func (o Options) where() managers.Where {
	return managers.Where{Home: o.Home, Getenv: o.Getenv, System: o.System}
}

func (o Options) withDefaults() Options {
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

// viaPlace is a place and the manager whose it is.
type viaPlace struct {
	managers.Place
	via string
}

type discovery struct {
	o       Options
	seen    map[string]bool // real paths already found
	found   []Found
	stopped string // what cut a walk short, "" while none did
	// reals are the real paths of the folders above the environments
	// found, resolved once per search (realPath).
	reals map[string]string
}

// add records f once by real path; with check its path must be an
// environment.
func (d *discovery) add(f Found, check bool) {
	abs, err := filepath.Abs(f.Path)
	if err != nil {
		return
	}
	if check && !pyenv.IsEnv(abs) {
		return
	}
	real, err := d.realPath(abs)
	if err != nil {
		real = abs
	}
	if d.seen[real] {
		return
	}
	d.seen[real] = true
	f.Path = abs
	d.found = append(d.found, f)
}

// realPath is filepath.EvalSymlinks of the clean absolute path p, with
// the folders above it resolved once per search: a thousand environments
// under one home share their parents, and resolving each path whole was
// a stat of every parent for each.
func (d *discovery) realPath(p string) (string, error) {
	if r, ok := d.reals[p]; ok {
		return r, nil
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil // a root
	}
	rp, err := d.realPath(parent)
	if err != nil {
		return "", err
	}
	here := filepath.Join(rp, filepath.Base(p))
	fi, err := os.Lstat(here)
	if err != nil {
		return "", err
	}
	r := here
	if fi.Mode()&fs.ModeSymlink != 0 {
		if r, err = filepath.EvalSymlinks(here); err != nil {
			return "", err
		}
	}
	if fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		if d.reals == nil {
			d.reals = map[string]string{}
		}
		d.reals[p] = r
	}
	return r, nil
}

// children adds the environments directly inside dir (.venv, .venv-gpu).
func (d *discovery) children(dir, via string) {
	for _, p := range envsUnder(dir, 1) {
		d.add(Found{Path: p, Via: via}, true)
	}
}
