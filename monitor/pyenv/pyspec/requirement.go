package pyspec

import "strings"

// Requirement is one PEP 508 requirement as a METADATA Requires-Dist line
// writes it: "nvidia-cublas-cu12==12.4.5.8; platform_system == 'Linux'".
type Requirement struct {
	// Name is the PEP 503 normalized distribution name.
	Name string
	// Specifier is the version specifier ("==12.4.5.8", ">=1,<2"), ""
	// when any version will do or the requirement is a URL.
	Specifier string
	// Marker is the environment marker after ";", "" when it always
	// applies.
	Marker string
}

// ParseRequirement splits a Requires-Dist value into name, specifier and
// marker; ok is false when it does not start with a distribution name.
// Extras ("name[extra]") are dropped; a URL requirement ("name @ URL")
// keeps no specifier.
func ParseRequirement(s string) (r Requirement, ok bool) {
	s = strings.TrimSpace(s)
	n := 0
	for n < len(s) && (isNameByte(s[n]) || s[n] >= '0' && s[n] <= '9' || s[n] == '-' || s[n] == '.') {
		n++
	}
	if n == 0 {
		return r, false
	}
	r.Name = NormalizeName(s[:n])
	rest := strings.TrimSpace(s[n:])
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return r, false
		}
		rest = strings.TrimSpace(rest[end+1:])
	}
	if strings.HasPrefix(rest, "@") {
		// PEP 508: a URL's marker is set off by whitespace before ";".
		if i := strings.Index(rest, " ;"); i >= 0 {
			r.Marker = strings.TrimSpace(rest[i+2:])
		}
		return r, true
	}
	spec, marker, _ := strings.Cut(rest, ";")
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "(") && strings.HasSuffix(spec, ")") {
		spec = strings.TrimSpace(spec[1 : len(spec)-1])
	}
	r.Specifier, r.Marker = spec, strings.TrimSpace(marker)
	return r, true
}

// NormalizeName is the PEP 503 normalized form of a distribution name:
// lowercase, runs of "-", "_" and "." as one "-".
func NormalizeName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	sep := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep {
			b.WriteByte('-')
		}
		sep = false
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	if sep {
		b.WriteByte('-')
	}
	return b.String()
}
