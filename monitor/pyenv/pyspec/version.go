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
// parse (value methods), so one is shared by all who parse its text. At
// most maxParsed texts are kept, the first ones: a process that lives
// on (the tray) sees a few hundred versions, not an unbounded number.
func ParseVersion(s string) (pep440.Version, error) {
	if p, ok := parsed.Load(s); ok {
		p := p.(parsedVersion)
		return p.v, p.err
	}
	v, err := pep440.Parse(s)
	if parsedCount.Load() < maxParsed {
		if _, loaded := parsed.LoadOrStore(s, parsedVersion{v, err}); !loaded {
			parsedCount.Add(1)
		}
	}
	return v, err
}

// parsedVersion is what pep440.Parse answered for a text.
type parsedVersion struct {
	v   pep440.Version
	err error
}

const maxParsed = 4096

var (
	parsed      sync.Map // text → parsedVersion
	parsedCount atomic.Int64
)
