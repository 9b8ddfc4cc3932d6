package pyenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Resolution is what a path a person typed stands for: an environment, a
// project folder resolved to the environment its manager uses for it, or
// an interpreter resolved to its environment.
type Resolution struct {
	// Arg is the path as given.
	Arg string `json:"arg"`
	// Env is the environment, absolute; "" when the project has none yet.
	Env string `json:"env,omitempty"`
	// Project is the project folder, when Arg was one (or a file in one).
	Project string `json:"project,omitempty"`
	// Manager is the Name of the manager whose rule chose Env.
	Manager string `json:"manager,omitempty"`
	// Rule says how, in words: "uv project", "Poetry project:
	// virtualenvs.path, named from the project's name and folder".
	Rule string `json:"rule,omitempty"`
	// Create, when Env is "", says how to create the project's
	// environment ("uv sync").
	Create string `json:"create,omitempty"`
}

// Line says what the path resolved to, for output: "./ → ./.venv (uv
// project)"; "" when Arg was the environment itself.
func (r Resolution) Line() string {
	if r.Rule == "" {
		return ""
	}
	base := r.Project
	if base == "" {
		base = r.Env
	}
	show := func(p string) string {
		if p == "" {
			return ""
		}
		if rel, err := filepath.Rel(base, p); err == nil && r.Project != "" && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return "." + string(filepath.Separator)
			}
			return "." + string(filepath.Separator) + rel
		}
		return p
	}
	arg := r.Arg
	if r.Project != "" && sameDir(r.Arg, r.Project) {
		arg = show(r.Project)
	}
	if r.Env == "" {
		return fmt.Sprintf("%s → no environment yet (%s)", arg, r.Rule)
	}
	return fmt.Sprintf("%s → %s (%s)", arg, show(r.Env), r.Rule)
}

// Resolve reads a path the way people type it: an environment is itself;
// an interpreter (.venv/bin/python, Scripts\python.exe, /usr/bin/python3)
// is the environment or prefix it belongs to; a site-packages folder is
// its environment's; a project folder (or its pyproject.toml, Pipfile or
// environment.yml) is the environment its manager would use, by the first
// manager in the table whose Project rule claims the folder. w says
// whose settings the managers read (zero: this process's).
func Resolve(path string, w Where) (Resolution, error) {
	w = w.withDefaults()
	r := Resolution{Arg: path}
	abs, err := filepath.Abs(path)
	if err != nil {
		return r, fmt.Errorf("resolve %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return r, fmt.Errorf("resolve %s: %w", path, err)
	}
	if !fi.IsDir() {
		switch strings.ToLower(filepath.Base(abs)) {
		case "pyproject.toml", "pipfile", "environment.yml", "environment.yaml", "hatch.toml", "pdm.lock", "uv.lock", "poetry.lock":
			return resolveProject(r, filepath.Dir(abs), w)
		}
		if env, ok := envOfInterpreter(abs); ok {
			r.Env, r.Rule = env, "the environment of this interpreter"
			return r, nil
		}
		return r, fmt.Errorf("resolve %s: %w (a file that is no interpreter of one, nor a project file)", path, ErrNotEnv)
	}
	if IsEnv(abs) {
		r.Env = abs
		return r, nil
	}
	if env, ok := envOfSite(abs); ok {
		r.Env, r.Rule = env, "the environment this site-packages belongs to"
		return r, nil
	}
	return resolveProject(r, abs, w)
}

// resolveProject asks each manager's Project rule, in table order.
func resolveProject(r Resolution, dir string, w Where) (Resolution, error) {
	for _, m := range managers {
		if m.Project == nil {
			continue
		}
		if got, ok := m.Project(dir, w); ok {
			got.Arg, got.Project, got.Manager = r.Arg, dir, m.Name
			if got.Env != "" && !IsEnv(got.Env) {
				got.Env = ""
			}
			return got, nil
		}
	}
	return r, fmt.Errorf("resolve %s: %w (nor a project folder of a manager GPU Canary knows)", r.Arg, ErrNotEnv)
}

// envOfSite maps a site folder to its environment: PREFIX/lib/pythonX.Y/
// site-packages (or dist-packages), PREFIX\Lib\site-packages, a user
// base's PythonXY\site-packages.
func envOfSite(dir string) (string, bool) {
	switch strings.ToLower(filepath.Base(dir)) {
	case "site-packages", "dist-packages":
	default:
		return "", false
	}
	up := filepath.Dir(dir)
	for range 2 {
		up = filepath.Dir(up)
		if IsEnv(up) {
			return up, true
		}
	}
	return "", false
}
