package envsearch

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// candidate is an environment a place may hold, unchecked, with what
// named it; missing is the interpreter it named when that does not
// exist (a kernel whose environment is gone).
type candidate struct {
	path, from string
	missing    string
}

// candidates returns the environments a place may hold, unchecked:
// itself, the folders inside it, the paths its list names or the
// environments its kernels run in. A missing place holds none.
func candidates(p managers.Place) []candidate {
	switch p.Holds {
	case managers.HoldsEnv:
		return []candidate{{path: p.Path, from: p.From}}
	case managers.HoldsEnvs:
		var out []candidate
		for _, c := range envsUnder(p.Path, max(1, p.Depth)) {
			out = append(out, candidate{path: c, from: p.From})
		}
		return out
	case managers.HoldsList:
		var out []candidate
		for _, c := range managers.EnvList(p.Path) {
			out = append(out, candidate{path: c, from: p.From})
		}
		return out
	case managers.HoldsKernels:
		return kernelEnvs(p.Path)
	}
	return nil
}

// envsUnder lists the folders (and links to folders) depth levels under
// dir that may be environments, sorted. A folder that is already an
// environment is not entered, but for its envs/ folder.
func envsUnder(dir string, depth int) []string {
	ents, err := safefs.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch {
		case pyenv.IsEnv(p):
			out = append(out, p)
			if isDir(filepath.Join(p, "envs")) {
				out = append(out, envsUnder(filepath.Join(p, "envs"), 1)...)
			}
		case depth > 1 && e.IsDir():
			out = append(out, envsUnder(p, depth-1)...)
		case depth == 1:
			out = append(out, p) // checked by the caller; keeps a broken env visible to it
		}
	}
	return out
}

// covers returns the folders a search of this place looks in and under.
func covers(p managers.Place) []string {
	switch p.Holds {
	case managers.HoldsList:
		return managers.EnvList(p.Path)
	case managers.HoldsKernels:
		var out []string
		for _, c := range kernelEnvs(p.Path) {
			if c.missing == "" {
				out = append(out, c.path)
			}
		}
		return out
	}
	return []string{p.Path}
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
