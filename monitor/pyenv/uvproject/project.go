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

	"github.com/gpucanary/gpucanary/monitor/fstrace"
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
func FindProject(envPath string) (Project, bool) { return find(envPath, nil, nil) }

// Finder is FindProject for many environments in one pass (a check of a
// thousand): the folders found to hold neither a pyproject.toml nor
// .git are remembered, so that the folders above many environments are
// looked in once. It is for one pass only: a project made in a folder
// after the pass looked in it is not seen. A nil *Finder remembers
// nothing. It is safe for concurrent use.
type Finder struct {
	empty sync.Map // folder -> []fstrace.Seen, the looks that found it empty
}

// Find is FindProject, remembering the empty folders it looked in.
func (f *Finder) Find(envPath string) (Project, bool) { return find(envPath, f, nil) }

// FindTraced is Find with every look at the disk its answer depends on
// recorded in t (monitor/fstrace): a folder the pass already found empty
// is not looked in again, but the looks that found it so are replayed
// into t.
func (f *Finder) FindTraced(envPath string, t *fstrace.Trace) (Project, bool) {
	return find(envPath, f, t)
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

func find(envPath string, f *Finder, t *fstrace.Trace) (Project, bool) {
	env := filepath.Clean(envPath)
	if abs, err := filepath.Abs(env); err == nil {
		env = abs
	}
	home, _ := t.UserHomeDir()
	// pyvenv.cfg is read only when a pyproject.toml is found to judge
	uvEnv := sync.OnceValue(func() bool { return madeByUV(t, env) })
	dir := filepath.Dir(env)
	for range maxLevels {
		if home != "" && dir == filepath.Clean(home) {
			break
		}
		if seen, ok := f.knownEmpty(dir); ok {
			t.Record(seen)
		} else {
			// The folder's looks go to a trace of their own when the
			// Finder may remember them, and on to t.
			look := t
			if f != nil {
				look = fstrace.New()
			}
			p, ok, present := projectIn(look, dir, uvEnv)
			var err error
			if !ok {
				_, err = look.StatKind(filepath.Join(dir, ".git"))
			}
			if look != t {
				t.Record(look.Seen())
				if why := look.Unsure(); why != "" {
					t.MarkUnsure(why)
				}
			}
			if ok {
				return p, true
			}
			if err == nil {
				break
			}
			if !present && errors.Is(err, fs.ErrNotExist) && f != nil && look.Unsure() == "" {
				f.empty.Store(dir, look.Seen())
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
// pyproject.toml nor .git, and the looks that found it so.
func (f *Finder) knownEmpty(dir string) ([]fstrace.Seen, bool) {
	if f == nil {
		return nil, false
	}
	v, ok := f.empty.Load(dir)
	if !ok {
		return nil, false
	}
	return v.([]fstrace.Seen), true
}

// projectIn reads dir for a uv project; present says whether dir holds a
// pyproject.toml at all (of uv or not).
// Its looks are recorded in t.
func projectIn(t *fstrace.Trace, dir string, uvEnv func() bool) (p Project, ok, present bool) {
	py := filepath.Join(dir, "pyproject.toml")
	fi, err := t.StatKind(py) // whether it is a file: its content is read (and stamped) when it is
	if err != nil || !fi.Mode().IsRegular() {
		return Project{}, false, err == nil || !errors.Is(err, fs.ErrNotExist)
	}
	p = Project{Dir: dir, Pyproject: py}
	if fi, err := t.StatKind(filepath.Join(dir, "uv.lock")); err == nil && fi.Mode().IsRegular() {
		p.Lock = filepath.Join(dir, "uv.lock")
	}
	if p.Lock != "" || uvEnv() || mentionsUV(t, py) {
		return p, true, true
	}
	return Project{}, false, true
}

// mentionsUV reports whether pyproject.toml has a [tool.uv] table (or one
// below it, or [[tool.uv.index]]).
func mentionsUV(t *fstrace.Trace, path string) bool {
	data, err := t.ReadFile(path, maxProjectFile)
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
func madeByUV(t *fstrace.Trace, env string) bool {
	f, err := t.Open(filepath.Join(env, "pyvenv.cfg"))
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
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		// cut short: what it did not read may say uv next time
		t.MarkUnsure("reading " + filepath.Join(env, "pyvenv.cfg") + ": " + err.Error())
	}
	return false
}

// maxProjectFile bounds a read of pyproject.toml or uv.lock: a lock of a
// large project is megabytes, never this.
const maxProjectFile = 64 << 20
