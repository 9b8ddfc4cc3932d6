package fstrace

import "sync"

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
// (permission, I/O) does not hold.
func (c *Checker) Holds(seen []Seen) bool {
	for _, s := range seen {
		now := c.look(s.Path, s.Look)
		now.stamp = reduce(s.Look, now.stamp)
		if !now.ok || now.absent != s.Absent || (!s.Absent && now.stamp != s.Stamp) {
			return false
		}
	}
	return true
}

func (c *Checker) look(path string, look Look) seenNow {
	k := lookKey{path, look}
	c.mu.Lock()
	r, ok := c.memo[k]
	c.mu.Unlock()
	if ok {
		return r
	}
	r = lookNow(path, look&NoFollow != 0)
	c.mu.Lock()
	if len(c.memo) < memoLimit {
		c.memo[k] = r
	}
	c.mu.Unlock()
	return r
}
