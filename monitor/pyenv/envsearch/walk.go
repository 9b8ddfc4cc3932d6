package envsearch

import (
	"context"
	"os"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/walk"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
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
func (d *discovery) walkPlace(ctx context.Context, pl managers.Place, via string) {
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
	j := walk.Judge{Env: d.listingEnv, LinkEnv: pyenv.IsEnv, Names: venvNames}
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
	if len(owners) > 0 || pyenv.PrefixListing(path, ents, pyenv.InspectOptions{Home: d.o.Home, Getenv: d.o.Getenv}) {
		return true, nestedIn(owners)
	}
	return false, nil
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
func listingOwners(ents []os.DirEntry) []*managers.Manager {
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
	var out []*managers.Manager
	for i := range table {
		if table[i].Marker.Name != "" && slices.Contains(present, table[i].Marker.Name) {
			out = append(out, &table[i])
		}
	}
	return out
}

// nestedIn lists the Nested folders of the given managers, each once.
func nestedIn(ms []*managers.Manager) []string {
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
