package pyspec

import (
	"sync"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// Satisfies reports whether version meets a PEP 440 specifier; known is
// false when either cannot be read. An empty specifier allows any version.
func Satisfies(version, specifier string) (ok, known bool) {
	if specifier == "" {
		return true, true
	}
	key := version + "\x00" + specifier
	satisfied.Lock()
	a, hit := satisfied.m[key]
	satisfied.Unlock()
	if hit {
		return a.ok, a.known
	}
	ok, known = satisfies(version, specifier)
	satisfied.Lock()
	if len(satisfied.m) >= maxSatisfied {
		clear(satisfied.m)
	}
	satisfied.m[key] = answer{ok, known}
	satisfied.Unlock()
	return ok, known
}

// satisfied keeps Satisfies' answers: parsing versions and specifiers
// (regular expressions) was a tenth of a check of a thousand
// environments, which ask the same few questions (torch's pins against
// the NVIDIA wheels installed) again and again. An answer never changes.
var satisfied = struct {
	sync.Mutex
	m map[string]answer
}{m: map[string]answer{}}

const maxSatisfied = 4096

type answer struct{ ok, known bool }

// satisfies is Satisfies without its memory.
func satisfies(version, specifier string) (ok, known bool) {
	spec, err := parseSpecifiers(specifier)
	if err != nil {
		return false, false
	}
	v, err := pep440.Parse(version)
	if err != nil {
		return false, false
	}
	switch checkSpec(spec, v) {
	case triTrue:
		return true, true
	case triFalse:
		return false, true
	}
	return false, false
}
