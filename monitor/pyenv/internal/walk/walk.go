// Package walk is the search of a folder tree for Python environments
// within budgets: the folders most likely to hold one first, never those
// that hold none, and a stop at a depth, a count of entries or a
// deadline. It knows no manager: what makes a folder an environment is
// the caller's Judge (pyenv's managers table). It imports nothing of GPU
// Canary's but safefs.
package walk

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// skipDirs are never entered by a walk: they are large, hold no
// environments worth watching, or hold package caches whose own
// environments are not the user's (Poetry's and uv's, under .cache, are
// found through their managers' Places).
var skipDirs = map[string]bool{
	"node_modules": true, ".git": true, ".hg": true, ".svn": true, ".bzr": true, "__pycache__": true,
	".cache": true, "caches": true, ".npm": true, ".yarn": true, ".pnpm-store": true, ".bun": true,
	".cargo": true, ".rustup": true, ".gradle": true, ".m2": true, ".ivy2": true, ".sbt": true, ".trash": true,
	"site-packages": true, "dist-packages": true, "pkgs": true, ".ipynb_checkpoints": true,
	".mozilla": true, ".thunderbird": true, "google-chrome": true, "chromium": true, "bravesoftware": true,
	".vscode-server": true, ".vscode": true, ".cursor-server": true, ".docker": true, "snap": true, ".steam": true,
	".local/share/trash": true, "appdata/local/packages": true, "appdata/local/temp": true, "appdata/local/microsoft": true,
	"appdata/local/google": true, "appdata/roaming/mozilla": true, "appdata/local/mozilla": true,
	"proc": true, "sys": true,
}

// skipped reports whether a folder is never entered, by its name or the
// last two parts of its path (AppData/Local/Temp).
func skipped(parent, name string) bool {
	l := strings.ToLower(name)
	if skipDirs[l] {
		return true
	}
	p1 := strings.ToLower(filepath.Base(parent))
	p2 := strings.ToLower(filepath.Base(filepath.Dir(parent)))
	return skipDirs[p1+"/"+l] || skipDirs[p2+"/"+p1+"/"+l]
}

// likelyEnv is true for the names people give environments: .venv,
// venv, env, .venv-gpu, myenv, venv310, virtualenvs, envs.
func (j Judge) likelyEnv(name string) bool {
	l := strings.ToLower(name)
	return slices.Contains(j.Names, l) || strings.Contains(l, "venv") || strings.HasSuffix(l, "env") ||
		strings.HasPrefix(l, "env") || strings.Contains(l, "conda") || strings.Contains(l, "mamba")
}

// projectFiles mark a project folder, whose folders are searched first.
var projectFiles = []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "poetry.lock",
	"uv.lock", "pdm.lock", "environment.yml", "environment.yaml", "hatch.toml", ".python-version", ".git"}

// codeNames are folders that usually hold projects.
var codeNames = map[string]bool{"src": true, "code": true, "projects": true, "project": true, "repos": true, "repo": true,
	"git": true, "work": true, "dev": true, "workspace": true, "workspaces": true, "github.com": true, "gitlab.com": true,
	"bitbucket.org": true, "research": true, "ml": true, "notebooks": true, "services": true, "apps": true, "packages": true,
	"documents": true, "desktop": true, "opt": true}

// bulkNames are folders that usually hold data, not environments: they
// are searched last.
var bulkNames = map[string]bool{"data": true, "datasets": true, "dataset": true, "downloads": true, "pictures": true,
	"music": true, "videos": true, "movies": true, "photos": true, "media": true, "logs": true, "checkpoints": true,
	"models": true, "outputs": true, "output": true, "runs": true, "wandb": true, "mlruns": true, "lightning_logs": true,
	"images": true, "cache": true, "tmp": true, "temp": true, "backup": true, "backups": true}

// Content limits of the walk.
const (
	// listLimit is the most entries one folder's listing reads; a larger
	// folder holds data (images, shards), and only its folders with an
	// environment's name among those read are looked at.
	listLimit = 4096
	// dataFolder: a listing of at least dataMin entries of which at most
	// one in twenty is a folder holds data; only its likely-named
	// folders are looked at.
	dataMin = 256
	// sampleAfter: once this many folders of one parent turned out to hold
	// only files (data shards, class folders of a dataset), the rest of
	// that parent's folders are not entered.
	sampleAfter = 3
)

type walkItem struct {
	path  string // as shown to the user (may pass through a symlink root)
	real  string // with symlinks resolved, for loop detection
	depth int
	base  int // the score its folders start from
	score int // lower is searched sooner: base, less a bonus for an environment's name
	seq   int // ties: the order queued
	group *siblings
}

// siblings are the folders of one parent, for sampling.
type siblings struct {
	dataLeaves, others int
}

// queue is the walk's priority queue.
type queue []*walkItem

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score < q[j].score
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*walkItem)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// Limits bound one walk.
type Limits struct {
	Depth   int      // folders below the root it enters
	Entries int      // listing entries it reads before it stops
	Skip    []string // names not entered at the root
}

// Judge is what the caller knows of environments.
type Judge struct {
	// Env says whether the folder at path, whose listing (sorted by
	// name) is ents, is an environment, and which of its folders hold
	// more of them (a conda base's envs): an environment's other folders
	// are not entered.
	Env func(path string, ents []os.DirEntry) (env bool, nested []string)
	// LinkEnv says whether a symbolic link leads to an environment: a
	// link is followed, as that environment, only then.
	LinkEnv func(path string) bool
	// Names are the folder names people give an environment (.venv,
	// venv), among those looked at first.
	Names []string
}

// Tree searches root for environments, most likely places first, and
// calls found with each: it takes the queued folder with the lowest score
// (deeper is later; folders named like environments at once; the folders
// of a project, or of src/, code/, github.com/, sooner; hidden folders
// and data-like names later), never enters what holds no environments
// (skipDirs; a folder tagged CACHEDIR.TAG; a bare Git repository; a
// browser profile; a folder of data files; the rest of a parent's
// folders once its first ones held only files), follows a symbolic link
// only when it points at an environment, and stops at l.Depth. When its
// entry budget or ctx ends it with folders still queued, stopped says
// so; err is a root that cannot be resolved, which is not walked.
func Tree(ctx context.Context, root string, l Limits, j Judge, found func(path string)) (stopped string, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", abs, err)
	}
	visited := map[string]bool{real: true}
	q := &queue{{path: abs, real: real}}
	seq, entries := 0, 0
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Sprintf("the search of %s ran out of time after %d entries (%d folders not searched)", abs, entries, q.Len()), nil
		}
		if entries > l.Entries {
			return fmt.Sprintf("the search of %s stopped at its budget of %d entries (%d folders not searched)", abs, l.Entries, q.Len()), nil
		}
		it := heap.Pop(q).(*walkItem)
		if g := it.group; g != nil && g.dataLeaves >= sampleAfter && g.others == 0 {
			continue // its first siblings held only files: a dataset's shards
		}
		ents, truncated, err := readDirBounded(it.path, listLimit)
		if err != nil {
			continue
		}
		entries += len(ents)
		dirs := 0
		for _, e := range ents {
			if e.IsDir() {
				dirs++
			}
		}
		if g := it.group; g != nil {
			if dirs == 0 && len(ents) >= 32 {
				g.dataLeaves++
			} else if dirs > 0 {
				g.others++
			}
		}
		if env, nested := j.Env(it.path, ents); env {
			found(it.path)
			for _, n := range nested {
				if e := Find(ents, n); e != nil && e.IsDir() && it.depth < l.Depth {
					heap.Push(q, &walkItem{path: filepath.Join(it.path, n), real: filepath.Join(it.real, n), depth: it.depth + 1, base: it.base, score: it.score, seq: seq})
					seq++
				}
			}
			continue // an environment's own folders hold no others, but for its manager's Nested
		}
		if it.depth >= l.Depth || holdsNoEnvs(ents) {
			continue
		}
		data := truncated || len(ents) >= dataMin && dirs*20 <= len(ents)
		project := slices.ContainsFunc(projectFiles, func(n string) bool { return Find(ents, n) != nil })
		var group *siblings
		if dirs >= 32 && !project {
			group = &siblings{}
		}
		for _, e := range ents {
			name := e.Name()
			if skipped(it.path, name) || data && !j.likelyEnv(name) || it.depth == 0 && slices.ContainsFunc(l.Skip, func(n string) bool { return strings.EqualFold(n, name) }) {
				continue
			}
			child := &walkItem{path: filepath.Join(it.path, name), real: filepath.Join(it.real, name), depth: it.depth + 1, group: group}
			switch {
			case e.IsDir():
			case e.Type()&os.ModeSymlink != 0:
				// a link is followed only to an environment, never into a tree
				// (a link to / must not make the search walk the machine)
				if j.LinkEnv(child.path) {
					found(child.path)
				}
				continue
			default:
				continue
			}
			if visited[child.real] {
				continue
			}
			visited[child.real] = true
			child.base = it.base + score(name, project, dirs)
			child.score, child.seq = child.base, seq
			if j.likelyEnv(name) {
				child.score -= 1000 // an environment's name: look at once
			}
			seq++
			heap.Push(q, child)
		}
	}
	return "", nil
}

// score is how much later a folder is searched than its parent.
func score(name string, inProject bool, siblingDirs int) int {
	l := strings.ToLower(name)
	s := 10
	switch {
	case inProject:
		s -= 5
	case codeNames[l]:
		s -= 5
	case bulkNames[l]:
		s += 60
	case strings.HasPrefix(l, "."):
		s += 30
	}
	if siblingDirs >= 64 {
		s += 40 // one of many folders: a dataset's classes, a cache's shards
	}
	return s
}

// holdsNoEnvs recognizes a folder by what it holds: a cache (the Cache
// Directory Tagging Specification's CACHEDIR.TAG, written by pip, uv,
// cargo and others), a bare Git repository, a browser profile (Firefox's
// prefs.js, Chromium's Preferences and Cookies), a Hugging Face dataset
// (dataset_info.json).
func holdsNoEnvs(ents []os.DirEntry) bool {
	has := func(n string) bool { return Find(ents, n) != nil }
	return has("CACHEDIR.TAG") || has("HEAD") && has("objects") && has("refs") || has("prefs.js") && has("times.json") ||
		has("Preferences") && has("Cookies") || has("dataset_info.json") || has("dataset_dict.json")
}

// readDirBounded lists at most limit entries of dir, sorted by name;
// truncated says there were more.
func readDirBounded(dir string, limit int) (ents []os.DirEntry, truncated bool, err error) {
	f, err := safefs.OpenDir(dir)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	ents, err = f.ReadDir(limit + 1)
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	if len(ents) > limit {
		ents, truncated = ents[:limit], true
	}
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, truncated, nil
}

// Find is the entry of a listing sorted by name (as Tree lists) named
// name, nil when there is none.
func Find(ents []os.DirEntry, name string) os.DirEntry {
	i, ok := slices.BinarySearchFunc(ents, name, func(e os.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
	if ok {
		return ents[i]
	}
	return nil
}
