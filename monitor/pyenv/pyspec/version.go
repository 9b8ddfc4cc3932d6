package pyspec

import (
	"sync"
	"sync/atomic"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// ParseVersion is pep440.Parse, once per distinct text. The library
// matches a long regular expression at each parse, and a check parses
// the same few texts again and again (each environment's torch and its
// companions, the knowledge's bounds): the parses were a sixteenth of a
// 20-environment check's time. A pep440.Version is read only after its
// parse (value methods), so one is shared by all who parse its text.
func ParseVersion(s string) (pep440.Version, error) { return versions.get(s) }

// parseSpecifiers is pep440.NewSpecifiers with pre-releases, once per
// distinct text: every environment's METADATA has the same markers
// (python_version < "3.13"), and a Specifiers is read only after it is
// made.
func parseSpecifiers(s string) (pep440.Specifiers, error) { return specifiers.get(s) }

var (
	versions   = memo[pep440.Version]{parse: pep440.Parse}
	specifiers = memo[pep440.Specifiers]{parse: func(s string) (pep440.Specifiers, error) {
		return pep440.NewSpecifiers(s, pep440.WithPreRelease(true))
	}}
)

// memo keeps parse's answers, an error included, for the first maxParsed
// distinct texts: a process that lives on (the tray) sees a few hundred,
// not an unbounded number. Safe for use by goroutines at once.
type memo[T any] struct {
	parse func(string) (T, error)
	m     sync.Map // text → parsed[T]
	n     atomic.Int64
}

const maxParsed = 4096

// parsed is what parse answered for a text.
type parsed[T any] struct {
	v   T
	err error
}

func (c *memo[T]) get(s string) (T, error) {
	if p, ok := c.m.Load(s); ok {
		p := p.(parsed[T])
		return p.v, p.err
	}
	v, err := c.parse(s)
	if c.n.Load() < maxParsed {
		if _, loaded := c.m.LoadOrStore(s, parsed[T]{v, err}); !loaded {
			c.n.Add(1)
		}
	}
	return v, err
}
