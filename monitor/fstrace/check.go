package fstrace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Checker looks again at what reads saw, to tell whether their answers
// still hold. It remembers its looks for its lifetime (one pass over many
// environments, which share the folders above them), up to memoLimit of
// them.
type Checker struct {
	mu   sync.Mutex
	memo map[lookKey]seenNow
}

type seenNow struct {
	absent bool
	stamp  Stamp
	ok     bool
}

// memoLimit bounds the looks a Checker remembers: enough for the
// folders shared by a home's environments, not a copy of every path.
const memoLimit = 4096

// NewChecker is a Checker that has looked at nothing yet.
func NewChecker() *Checker { return &Checker{memo: map[lookKey]seenNow{}} }

// Holds reports whether every path in seen still looks as it did: the
// same stamp, or still nothing there. A look that fails otherwise
// (permission, I/O) does not hold. The paths under the folder most of
// them are in (an environment's site-packages) are looked at from that
// folder, opened once, not each walked from the root again.
func (c *Checker) Holds(seen []Seen) bool {
	at := openBase(baseOf(seen))
	defer at.close()
	for _, s := range seen {
		noFollow := s.Look&NoFollow != 0
		var now seenNow
		if rel, ok := at.under(s.Path); ok {
			now = at.look(rel, noFollow)
		} else {
			now = c.look(s.Path, noFollow)
		}
		now.stamp = reduce(s.Look, now.stamp)
		if !now.ok || now.absent != s.Absent || (!s.Absent && now.stamp != s.Stamp) {
			return false
		}
	}
	return true
}

// look is a look at a path outside a read's base folder (the folders
// above an environment, a base interpreter's), remembered: many
// environments share them.
func (c *Checker) look(path string, noFollow bool) seenNow {
	k := lookKey{path, 0}
	if noFollow {
		k.look = NoFollow
	}
	c.mu.Lock()
	r, ok := c.memo[k]
	c.mu.Unlock()
	if ok {
		return r
	}
	r = lookNow(path, noFollow)
	c.mu.Lock()
	if len(c.memo) < memoLimit {
		c.memo[k] = r
	}
	c.mu.Unlock()
	return r
}

// baseOf is the folder that the looks in seen are best made from: of the
// folders seen whole (listed, or stat'ed in full), the one with the most
// looks under it, by the folders each saves walking; "" when none holds
// at least minBase.
func baseOf(seen []Seen) string {
	best, score := "", 0
	for _, d := range seen {
		if d.Absent || d.Look != Follow || !isDir(d.Stamp) {
			continue
		}
		n := 0
		for _, s := range seen {
			if under(d.Path, s.Path) {
				n++
			}
		}
		if n < minBase {
			continue
		}
		if sc := n * strings.Count(d.Path, string(filepath.Separator)); sc > score {
			best, score = d.Path, sc
		}
	}
	return best
}

// minBase is how many looks a folder must hold to be opened as a base.
const minBase = 4

// under reports whether path is inside the folder dir.
func under(dir, path string) bool {
	return len(path) > len(dir)+1 && path[:len(dir)] == dir && os.IsPathSeparator(path[len(dir)])
}
