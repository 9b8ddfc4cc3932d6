package pyspec

import (
	"strings"
	"sync"
	"sync/atomic"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// A check asks the same few PEP 440 questions hundreds of times (each
// environment's torch and its companions against the knowledge's
// bounds), and go-pep440-version matches a long regular expression at
// each parse: the parses were a sixteenth of a 20-environment check.
// What is kept, once per text, is plain answers, never a pep440.Version:
// one is not safe to share, Compare padding its key's release in place
// (go-version's Parts.Padding appends into the slice's spare capacity),
// so two goroutines comparing one kept Version race.

// Version is what a PEP 440 version says, in its normalized text: its
// public version (no local part), its base version (no pre-, post- or
// dev-release, no local part) and its local part.
type Version struct {
	Public, Base, Local string
}

// VersionOf is the Version of the text s, parsed once per text.
func VersionOf(s string) (Version, error) { return versions.get(s) }

// CompareVersions orders the PEP 440 versions a and b (-1, 0, 1), the
// answer kept once per pair; an error when either is no version.
func CompareVersions(a, b string) (int, error) { return comparisons.get(a + "\x00" + b) }

// parseSpecifiers is pep440.NewSpecifiers with pre-releases, once per
// distinct text: every environment's METADATA has the same markers
// (python_version < "3.13"). A Specifiers may be shared: Check parses
// its operands afresh and pads only the Version it is given.
func parseSpecifiers(s string) (pep440.Specifiers, error) { return specifiers.get(s) }

var (
	versions = memo[Version]{parse: func(s string) (Version, error) {
		v, err := pep440.Parse(s)
		if err != nil {
			return Version{}, err
		}
		return Version{Public: v.Public(), Base: v.BaseVersion(), Local: v.Local()}, nil
	}}
	comparisons = memo[int]{parse: func(pair string) (int, error) {
		a, b, _ := strings.Cut(pair, "\x00") // as CompareVersions joined them
		va, err := pep440.Parse(a)
		if err != nil {
			return 0, err
		}
		vb, err := pep440.Parse(b)
		if err != nil {
			return 0, err
		}
		return va.Compare(vb), nil
	}}
	specifiers = memo[pep440.Specifiers]{parse: func(s string) (pep440.Specifiers, error) {
		return pep440.NewSpecifiers(s, pep440.WithPreRelease(true))
	}}
)

// memo keeps parse's answers, an error included, for the first maxParsed
// distinct texts: a process that lives on (the tray) sees a few hundred,
// not an unbounded number. Safe for use by goroutines at once, for
// answers that are themselves safe to share.
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
