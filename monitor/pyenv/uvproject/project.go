package uvproject

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Project is a uv project: pyproject.toml, and uv.lock when there is one.
type Project struct {
	Dir       string `json:"dir"`
	Pyproject string `json:"pyproject"`
	Lock      string `json:"lock,omitempty"` // "" when there is no uv.lock
}

// maxLevels is how many folders FindProject looks in, starting with the
// environment's parent: a .venv sits in its project, and
// UV_PROJECT_ENVIRONMENT may put it a few levels deeper.
const maxLevels = 5

// FindProject finds the uv project an environment belongs to, so that a
// CUDA torch in it can be protected from the next `uv sync`. It looks for
// pyproject.toml from the environment's parent upwards, at most five
// folders, never into $HOME or above, and not above a folder holding .git
// (the repository root). A pyproject.toml counts only with a sign of uv:
// a uv.lock beside it, a [tool.uv...] table in it, or a `uv = ` line in the
// environment's pyvenv.cfg; a Poetry or PDM project is left alone.
func FindProject(envPath string) (Project, bool) {
	env := filepath.Clean(envPath)
	if abs, err := filepath.Abs(env); err == nil {
		env = abs
	}
	home, _ := os.UserHomeDir()
	uvEnv := madeByUV(env)
	dir := filepath.Dir(env)
	for range maxLevels {
		if home != "" && dir == filepath.Clean(home) {
			break
		}
		if p, ok := projectIn(dir, uvEnv); ok {
			return p, true
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return Project{}, false
}

// projectIn reads dir for a uv project.
func projectIn(dir string, uvEnv bool) (Project, bool) {
	py := filepath.Join(dir, "pyproject.toml")
	fi, err := os.Stat(py)
	if err != nil || !fi.Mode().IsRegular() {
		return Project{}, false
	}
	p := Project{Dir: dir, Pyproject: py}
	if fi, err := os.Stat(filepath.Join(dir, "uv.lock")); err == nil && fi.Mode().IsRegular() {
		p.Lock = filepath.Join(dir, "uv.lock")
	}
	if p.Lock != "" || uvEnv || mentionsUV(py) {
		return p, true
	}
	return Project{}, false
}

// mentionsUV reports whether pyproject.toml has a [tool.uv] table (or one
// below it, or [[tool.uv.index]]).
func mentionsUV(path string) bool {
	data, err := safefs.ReadFile(path, maxProjectFile)
	if err != nil {
		return false
	}
	for _, h := range scanTOML(string(stripBOM(data))).headers {
		if len(h.key) >= 2 && h.key[0] == "tool" && h.key[1] == "uv" {
			return true
		}
	}
	return bytes.Contains(data, []byte("tool.uv"))
}

// madeByUV reports whether the environment's pyvenv.cfg has the
// `uv = X.Y.Z` line uv writes (KB-FACTS, dist-info).
func madeByUV(env string) bool {
	f, err := safefs.Open(filepath.Join(env, "pyvenv.cfg"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, _, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == "uv" {
			return true
		}
	}
	return false
}

// maxProjectFile bounds a read of pyproject.toml or uv.lock: a lock of a
// large project is megabytes, never this.
const maxProjectFile = 64 << 20
