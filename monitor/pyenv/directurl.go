package pyenv

import (
	"net/url"
	"path/filepath"
)

// SourceDir is the folder an editable install was made from, read from
// direct_url.json's file:// url (PEP 610): the checkout import loads the
// package's code from. It is "" when p is not editable or its url is not
// a local file URL; DirectURL then says what pip recorded.
func (p *Package) SourceDir() string {
	if p == nil || !p.Editable {
		return ""
	}
	return fileURLPath(p.DirectURL)
}

// fileURLPath turns a file:// URL as pip writes it into a path of this
// system: file:///home/u/src/pytorch, file:///C:/src/pytorch (on Windows the
// drive's leading slash dropped), %20 decoded. Anything else is "".
func fileURLPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
		return ""
	}
	p := u.Path
	if len(p) > 1 && p[0] == '/' && filepath.VolumeName(p[1:]) != "" {
		p = p[1:] // /C:/src on Windows; VolumeName is "" elsewhere
	}
	return filepath.Clean(filepath.FromSlash(p))
}
