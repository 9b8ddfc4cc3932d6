package pyspec

import pep440 "github.com/aquasecurity/go-pep440-version"

// Satisfies reports whether version meets a PEP 440 specifier; known is
// false when either cannot be read. An empty specifier allows any version.
func Satisfies(version, specifier string) (ok, known bool) {
	if specifier == "" {
		return true, true
	}
	spec, err := pep440.NewSpecifiers(specifier, pep440.WithPreRelease(true))
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
