package pyenv

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// skipDirs are never descended into by the home walk: they are large, hold
// no environments worth watching, or hold package caches whose own
// environments are not the user's.
var skipDirs = map[string]bool{
	"node_modules": true, ".git": true, ".hg": true, ".svn": true, "__pycache__": true,
	".cache": true, "caches": true, ".npm": true, ".yarn": true, ".pnpm-store": true,
	".cargo": true, ".rustup": true, ".gradle": true, ".m2": true, ".trash": true,
	"site-packages": true, "dist-packages": true, "pkgs": true, ".ipynb_checkpoints": true,
	"proc": true, "sys": true,
}

type walkItem struct {
	path  string // as shown to the user (may pass through a symlink)
	real  string // with symlinks resolved, for loop detection
	depth int
}

// walk is a breadth-first walk of root bounded by depth, entry count and
// ctx. Symlinked directories are followed once: every directory is keyed by
// its real path, so a link back to an ancestor ends there.
func (d *discovery) walk(ctx context.Context, root, via string) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		d.o.Logger.Debug("discover: skip root", "root", abs, "err", err)
		return
	}
	visited := map[string]bool{real: true}
	queue := []walkItem{{path: abs, real: real}}
	entries := 0
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			d.o.Logger.Info("discover: walk stopped by its time budget", "root", abs, "entries", entries)
			d.cut = true
			return
		}
		it := queue[0]
		queue = queue[1:]
		ents, err := safefs.ReadDir(it.path)
		if err != nil {
			continue
		}
		entries += len(ents)
		if owners := listingOwners(ents); len(owners) > 0 {
			d.add(it.path, via, false)
			for _, n := range nestedIn(owners) {
				if e := findEntry(ents, n); e != nil && e.IsDir() && it.depth < d.o.MaxDepth {
					queue = append(queue, walkItem{path: filepath.Join(it.path, n), real: filepath.Join(it.real, n), depth: it.depth + 1})
				}
			}
			continue // an environment's own folders hold no others, but for its manager's Nested
		}
		if entries > d.o.MaxEntries {
			d.o.Logger.Info("discover: walk stopped by its entry budget", "root", abs, "entries", entries)
			return
		}
		if it.depth >= d.o.MaxDepth {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if skipDirs[strings.ToLower(name)] {
				continue
			}
			child := walkItem{path: filepath.Join(it.path, name), real: filepath.Join(it.real, name), depth: it.depth + 1}
			switch {
			case e.IsDir():
			case e.Type()&os.ModeSymlink != 0:
				r, err := filepath.EvalSymlinks(child.path)
				if err != nil {
					continue
				}
				fi, err := os.Stat(r)
				if err != nil || !fi.IsDir() {
					continue
				}
				child.real = r
			default:
				continue
			}
			if visited[child.real] {
				continue
			}
			visited[child.real] = true
			queue = append(queue, child)
		}
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
		if slices.Contains(present, managers[i].Marker.Name) {
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

func findEntry(ents []os.DirEntry, name string) os.DirEntry {
	for _, e := range ents {
		if e.Name() == name {
			return e
		}
	}
	return nil
}

// IsEnv reports whether dir is a Python environment: it has some manager's
// marker (a pyvenv.cfg file for venv, virtualenv and uv; a conda-meta
// folder for conda and mamba).
func IsEnv(dir string) bool {
	for _, mk := range envMarkers {
		fi, err := os.Stat(filepath.Join(dir, mk.Name))
		if err == nil && (mk.Dir && fi.IsDir() || !mk.Dir && fi.Mode().IsRegular()) {
			return true
		}
	}
	return false
}
