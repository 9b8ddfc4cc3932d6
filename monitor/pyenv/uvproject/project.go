package uvproject

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
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
func FindProject(envPath string) (Project, bool) { return find(disk.Real{}, envPath, nil) }

// Finder is FindProject for many environments in one pass (a check of a
// thousand): the folders found to hold neither a pyproject.toml nor
// .git are remembered, so that the folders above many environments are
// looked in once. It is for one pass only: a project made in a folder
// after the pass looked in it is not seen. A nil *Finder remembers
// nothing. It is safe for concurrent use.
type Finder struct {
	empty sync.Map // folder -> struct{}: it holds neither pyproject.toml nor .git
}

// Find is FindProject, remembering the empty folders it looked in.
func (f *Finder) Find(envPath string) (Project, bool) { return find(disk.Real{}, envPath, f) }

// FindOn is Find looking at d: the reader's disk, so that a read of an
// environment and of its project look at the same one.
func (f *Finder) FindOn(d disk.Disk, envPath string) (Project, bool) {
	return find(d, envPath, f)
}

type finderKey struct{}

// WithFinder is ctx carrying a new Finder for one pass of reads.
func WithFinder(ctx context.Context) context.Context {
	return context.WithValue(ctx, finderKey{}, &Finder{})
}

// FinderFrom is ctx's Finder (WithFinder), nil when it has none.
func FinderFrom(ctx context.Context) *Finder {
	f, _ := ctx.Value(finderKey{}).(*Finder)
	return f
}

func find(d disk.Disk, envPath string, f *Finder) (Project, bool) {
	env := filepath.Clean(envPath)
	if abs, err := filepath.Abs(env); err == nil {
		env = abs
	}
	home, _ := disk.UserHomeDir(d)
	// pyvenv.cfg is read only when a pyproject.toml is found to judge
	uvEnv := sync.OnceValue(func() bool { return madeByUV(d, env) })
	dir := filepath.Dir(env)
	for range maxLevels {
		if home != "" && dir == filepath.Clean(home) {
			break
		}
		if !f.knownEmpty(dir) {
			p, ok, present := projectIn(d, dir, uvEnv)
			if ok {
				return p, true
			}
			_, err := d.Stat(filepath.Join(dir, ".git"))
			if err == nil {
				break
			}
			if !present && errors.Is(err, fs.ErrNotExist) && f != nil {
				f.empty.Store(dir, struct{}{})
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return Project{}, false
}

// knownEmpty reports whether the pass found dir to hold neither
// pyproject.toml nor .git.
func (f *Finder) knownEmpty(dir string) bool {
	if f == nil {
		return false
	}
	_, ok := f.empty.Load(dir)
	return ok
}

// projectIn reads dir for a uv project; present says whether dir holds a
// pyproject.toml at all (of uv or not).
func projectIn(d disk.Disk, dir string, uvEnv func() bool) (p Project, ok, present bool) {
	py := filepath.Join(dir, "pyproject.toml")
	fi, err := d.Stat(py)
	if err != nil || !fi.Mode().IsRegular() {
		return Project{}, false, err == nil || !errors.Is(err, fs.ErrNotExist)
	}
	p = Project{Dir: dir, Pyproject: py}
	if fi, err := d.Stat(filepath.Join(dir, "uv.lock")); err == nil && fi.Mode().IsRegular() {
		p.Lock = filepath.Join(dir, "uv.lock")
	}
	if p.Lock != "" || uvEnv() || mentionsUV(d, py) {
		return p, true, true
	}
	return Project{}, false, true
}

// mentionsUV reports whether pyproject.toml has a [tool.uv] table (or one
// below it, or [[tool.uv.index]]).
func mentionsUV(d disk.Disk, path string) bool {
	data, err := d.ReadFile(path, maxProjectFile)
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
func madeByUV(d disk.Disk, env string) bool {
	f, err := d.Open(filepath.Join(env, "pyvenv.cfg"))
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
