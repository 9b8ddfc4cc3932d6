package managers

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
// sees them (envsearch.Options.Home and Getenv, never the process's own in
// tests).
type Where struct {
	Home   string
	Getenv func(string) string
	// System, when not nil, replaces the platform's interpreter prefixes
	// and system-wide folders (/usr, /usr/local, /opt/conda,
	// /usr/share/jupyter; C:\Python311): tests name their own, or none.
	System []string
}

// WithDefaults fills what w leaves out with this process's own: its
// variables and its home.
func (w Where) WithDefaults() Where {
	if w.Getenv == nil {
		w.Getenv = os.Getenv
	}
	if w.Home == "" {
		w.Home, _ = os.UserHomeDir()
	}
	return w
}

// env reads a variable, trimmed.
func (w Where) env(name string) string {
	if w.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(w.Getenv(name))
}

// expand reads a path as the tools do: ~ is home, $VAR and ${VAR} are
// variables (Python's os.path.expanduser and expandvars), relative to
// nothing.
func (w Where) expand(p string) string {
	p = strings.TrimSpace(p)
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		if w.Home == "" {
			return ""
		}
		p = filepath.Join(w.Home, p[1:])
	}
	p = os.Expand(p, func(k string) string { return w.env(k) })
	return filepath.Clean(p)
}

// Place is somewhere a manager keeps environments.
type Place struct {
	Path  string
	Holds Holds
	// Depth is how many folders down a HoldsEnvs place keeps its
	// environments: 1 (or 0) for its children, 3 for hatch's
	// PROJECT/ID/ENV. An environment's own folders are not searched,
	// but for an envs/ folder inside it (conda's base,
	// pyenv-virtualenv's versions/3.11.7/envs).
	Depth int
	// From names what pointed there, for envsearch.Found.From: the variable, the
	// config file and key, or the tool's default.
	From string
	// Entries bounds a HoldsTree walk (0: the search's MaxEntries); Skip
	// are folder names its walk does not enter at the place's top
	// (Windows, Program Files on a drive's root).
	Entries int
	Skip    []string
}

// Holds says what a Place's path is.
type Holds int

const (
	// HoldsEnv: the path is one environment (conda's base install, /usr).
	HoldsEnv Holds = iota
	// HoldsEnvs: the folders inside the path (Depth levels down) are
	// environments (conda's envs/, Poetry's virtualenvs/).
	HoldsEnvs
	// HoldsList: the path is a text file that names one environment per
	// line, absolute (conda's environments.txt).
	HoldsList
	// HoldsKernels: the path is a Jupyter kernels folder; each
	// NAME/kernel.json names the interpreter the kernel runs, whose
	// environment is found (Jupyter's kernelspec layout).
	HoldsKernels
	// HoldsTree: the path is a folder people unpack apps into (Desktop,
	// a drive's root): it is walked, Depth levels down, for the
	// environments anywhere in it, within its Entries budget, and a walk
	// that stops early says so (envsearch.Discovery.Stopped).
	HoldsTree
)

// EnvList reads a list of environment paths, one absolute path a
// line, sorted; a missing or unreadable file lists none. The read is
// bounded: a list is kilobytes, never more.
func EnvList(path string) []string {
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
