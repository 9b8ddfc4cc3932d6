package pyenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
		ents, err := os.ReadDir(it.path)
		if err != nil {
			continue
		}
		entries += len(ents)
		if isEnvListing(ents) {
			d.add(it.path, via, false)
			if e := findEntry(ents, "envs"); e != nil && e.IsDir() && it.depth < d.o.MaxDepth {
				p := filepath.Join(it.path, "envs")
				queue = append(queue, walkItem{path: p, real: filepath.Join(it.real, "envs"), depth: it.depth + 1})
			}
			continue // an environment's own folders hold no other environments
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

// isEnvListing reports whether a directory listing is an environment's.
func isEnvListing(ents []os.DirEntry) bool {
	if e := findEntry(ents, "pyvenv.cfg"); e != nil && !e.IsDir() {
		return true
	}
	e := findEntry(ents, "conda-meta")
	return e != nil && (e.IsDir() || e.Type()&os.ModeSymlink != 0)
}

func findEntry(ents []os.DirEntry, name string) os.DirEntry {
	for _, e := range ents {
		if e.Name() == name {
			return e
		}
	}
	return nil
}

// IsEnv reports whether dir is a Python environment: it has a pyvenv.cfg
// (venv, virtualenv, uv) or a conda-meta folder (conda, mamba).
func IsEnv(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "pyvenv.cfg")); err == nil && fi.Mode().IsRegular() {
		return true
	}
	fi, err := os.Stat(filepath.Join(dir, "conda-meta"))
	return err == nil && fi.IsDir()
}
