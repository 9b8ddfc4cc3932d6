package envsearch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// Resolve reads a path the way people type it: an environment is itself;
// an interpreter (.venv/bin/python, Scripts\python.exe, /usr/bin/python3)
// is the environment or prefix it belongs to; a site-packages folder is
// its environment's; a project folder (or its pyproject.toml, Pipfile or
// environment.yml) is the environment its manager would use, by the first
// manager in the table whose Project rule claims the folder. w says
// whose settings the managers read (zero: this process's).
func Resolve(path string, w managers.Where) (managers.Resolution, error) {
	w = w.WithDefaults()
	r := managers.Resolution{Arg: path}
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
		if env, ok := pyenv.EnvOfInterpreter(abs); ok {
			r.Env, r.Rule = env, "the environment of this interpreter"
			return r, nil
		}
		return r, fmt.Errorf("resolve %s: %w (a file that is no interpreter of one, nor a project file)", path, pyenv.ErrNotEnv)
	}
	if pyenv.IsEnv(abs) {
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
func resolveProject(r managers.Resolution, dir string, w managers.Where) (managers.Resolution, error) {
	for _, m := range table {
		if m.Project == nil {
			continue
		}
		if got, ok := m.Project(dir, w); ok {
			got.Arg, got.Project, got.Manager = r.Arg, dir, m.Name
			if got.Env != "" && !pyenv.IsEnv(got.Env) {
				got.Env = ""
			}
			return got, nil
		}
	}
	return r, fmt.Errorf("resolve %s: %w (nor a project folder of a manager GPU Canary knows)", r.Arg, pyenv.ErrNotEnv)
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
		if pyenv.IsEnv(up) {
			return up, true
		}
	}
	return "", false
}
