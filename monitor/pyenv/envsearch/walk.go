package pyenv

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/walk"
)

// walk searches root for environments within the search's bounds
// (walk.Tree says in what order, and what it never enters); when its
// entry or time budget ends it with folders still queued, it says so in
// d.stopped.
func (d *discovery) walk(ctx context.Context, root, via string) {
	d.walkLimited(ctx, root, walkLimits{via: via, depth: d.o.MaxDepth, entries: d.o.MaxEntries})
}

// walkLimits are one walk's bounds and how it names what it finds.
type walkLimits struct {
	via, from      string
	depth, entries int
	skip           []string // names not entered at the root
}

// walkPlace walks a HoldsTree place within its own bounds (never more
// than the search's).
func (d *discovery) walkPlace(ctx context.Context, pl Place, via string) {
	l := walkLimits{via: via, from: pl.From, depth: min(max(pl.Depth, 1), d.o.MaxDepth), entries: d.o.MaxEntries, skip: pl.Skip}
	if pl.Entries > 0 {
		l.entries = min(pl.Entries, d.o.MaxEntries)
	}
	if exists(pl.Path) {
		d.walkLimited(ctx, pl.Path, l)
	}
}

// walkLimited walks root within l, the managers table judging each
// folder's listing.
func (d *discovery) walkLimited(ctx context.Context, root string, l walkLimits) {
	j := walk.Judge{Env: d.listingEnv, LinkEnv: IsEnv, Names: venvNames}
	stopped, err := walk.Tree(ctx, root, walk.Limits{Depth: l.depth, Entries: l.entries, Skip: l.skip}, j, func(path string) {
		d.add(Found{Path: path, Via: l.via, From: l.from}, false)
	})
	if err != nil {
		d.o.Logger.Debug("discover: skip root", "root", root, "err", err)
		return
	}
	if stopped != "" {
		d.stop(stopped)
	}
}

// listingEnv says whether a listing is an environment's: some manager's
// marker, or an interpreter's installation; nested are the folders its
// managers keep more environments in.
func (d *discovery) listingEnv(path string, ents []os.DirEntry) (env bool, nested []string) {
	owners := listingOwners(ents)
	if len(owners) > 0 || d.prefixListing(path, ents) {
		return true, nestedIn(owners)
	}
	return false, nil
}

// prefixListing recognizes an interpreter's installation from its
// listing (a lib or Lib folder beside bin, include or python.exe) and
// then from its standard library.
func (d *discovery) prefixListing(path string, ents []os.DirEntry) bool {
	if walk.Find(ents, "python.exe") != nil {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		if _, ok := embeddedListing(names); ok {
			return true // an embedded Python (embedded.go)
		}
	}
	hasLib := walk.Find(ents, "lib") != nil || walk.Find(ents, "Lib") != nil
	if !hasLib || walk.Find(ents, "bin") == nil && walk.Find(ents, "include") == nil && walk.Find(ents, "python.exe") == nil {
		return false
	}
	return windowsStdlib(path) || len(stdlibVersions(path)) > 0 || isUserBase(path, InspectOptions{Home: d.o.Home, Getenv: d.o.Getenv})
}

// stop records the first reason a walk was cut short.
func (d *discovery) stop(why string) {
	d.o.Logger.Info("discover: " + why)
	if d.stopped == "" {
		d.stopped = why
	}
}

// listingOwners returns the managers whose marker entry a directory
// listing has (a pyvenv.cfg file, a conda-meta folder or link), ignoring
// CfgKey: any of them makes the directory an environment. The listing is
// read once, whatever its size and the table's.
func listingOwners(ents []os.DirEntry) []*Manager {
	var present []string
	for _, e := range ents {
		for _, mk := range envMarkers {
			if e.Name() == mk.Name && (mk.Dir && (e.IsDir() || e.Type()&os.ModeSymlink != 0) || !mk.Dir && !e.IsDir()) {
				present = append(present, mk.Name)
			}
		}
	}
	if len(present) == 0 {
		return nil
	}
	var out []*Manager
	for i := range managers {
		if managers[i].Marker.Name != "" && slices.Contains(present, managers[i].Marker.Name) {
			out = append(out, &managers[i])
		}
	}
	return out
}

// nestedIn lists the Nested folders of the given managers, each once.
func nestedIn(ms []*Manager) []string {
	var out []string
	for _, m := range ms {
		for _, n := range m.Nested {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// IsEnv reports whether dir is a Python environment: it has some manager's
// marker (a pyvenv.cfg file for venv, virtualenv and uv; a conda-meta
// folder for conda and mamba), or it is an interpreter's own installation
// (a standard library at lib/pythonX.Y/os.py or Lib\os.py) or a user
// base holding a user site. A file marker that is there but is no
// regular file (a FIFO pyvenv.cfg) still makes an environment, as it
// does for the walk (listingOwners): Inspect then says what it is,
// instead of the environment being reported as none.
func IsEnv(dir string) bool {
	for _, mk := range envMarkers {
		fi, err := os.Stat(filepath.Join(dir, mk.Name))
		if err == nil && mk.Dir == fi.IsDir() {
			return true
		}
	}
	return windowsStdlib(dir) || len(stdlibVersions(dir)) > 0 || isUserBase(dir, InspectOptions{}) || isEmbedded(dir)
}
