package pyenv

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Where is what a manager's places are worked out from: the user's home
// and the environment variables its config may be set by, as the search
// sees them (DiscoverOptions.Home and Getenv, never the process's own in
// tests).
type Where struct {
	Home   string
	Getenv func(string) string
}

// Place is somewhere a manager keeps environments.
type Place struct {
	Path  string
	Holds Holds
}

// Holds says what a Place's path is.
type Holds int

const (
	// HoldsEnv: the path is one environment (conda's base install).
	HoldsEnv Holds = iota
	// HoldsEnvs: each folder directly inside the path is one (conda's envs/).
	HoldsEnvs
	// HoldsList: the path is a text file that names one environment per
	// line, absolute (conda's environments.txt).
	HoldsList
)

// envPaths returns the environments a place may hold, unchecked: itself,
// its children or the paths its list names. A missing place holds none.
func (p Place) envPaths() []string {
	switch p.Holds {
	case HoldsEnv:
		return []string{p.Path}
	case HoldsEnvs:
		ents, err := safefs.ReadDir(p.Path)
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range ents {
			if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
				out = append(out, filepath.Join(p.Path, e.Name()))
			}
		}
		return out
	case HoldsList:
		return readEnvList(p.Path)
	}
	return nil
}

// covers returns the folders a search of this place looks in and under.
func (p Place) covers() []string {
	if p.Holds == HoldsList {
		return readEnvList(p.Path)
	}
	return []string{p.Path}
}

// readEnvList reads a list of environment paths, one absolute path a
// line, sorted; a missing or unreadable file lists none. The read is
// bounded: a list is kilobytes, never more.
func readEnvList(path string) []string {
	f, err := safefs.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 256<<10))
	var lines []string
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && filepath.IsAbs(l) {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return lines
}

// condaHomes are the folders under home where conda, mamba and their
// installers put the base environment (with envs/ inside).
var condaHomes = []string{
	"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", "miniconda", "anaconda",
	".conda", ".mamba", filepath.Join("opt", "miniconda3"), filepath.Join("opt", "anaconda3"),
	filepath.Join(".local", "share", "mamba"),
}

// condaPlaces are the base installs and envs/ of the usual conda folders
// under home, then the environments conda lists in
// ~/.conda/environments.txt (conda's envs_manager registers every
// environment it creates or installs into there, one prefix a line).
func condaPlaces(w Where) []Place {
	if w.Home == "" {
		return nil
	}
	var out []Place
	for _, c := range condaHomes {
		base := filepath.Join(w.Home, c)
		out = append(out, Place{Path: base, Holds: HoldsEnv}, Place{Path: filepath.Join(base, "envs"), Holds: HoldsEnvs})
	}
	return append(out, Place{Path: filepath.Join(w.Home, ".conda", "environments.txt"), Holds: HoldsList})
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
