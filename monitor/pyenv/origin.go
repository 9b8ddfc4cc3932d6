package pyenv

import (
	"fmt"
	"slices"
)

// siteIndex is the place on e.Sites of the folder p was read from, -1
// when p was read from none of them.
func (e *Env) siteIndex(p *Package) int {
	if p == nil || p.Site == "" {
		return -1
	}
	return slices.IndexFunc(e.Sites, func(s Site) bool { return s.Path == p.Site })
}

// ownIndex is the place on e.Sites of the environment's first own site,
// -1 when it has none.
func (e *Env) ownIndex() int {
	return slices.IndexFunc(e.Sites, func(s Site) bool { return s.From == SiteOwn })
}

// SiteOf is the folder on the import path p was read from; ok is false
// when p was read from none of e.Sites.
func (e *Env) SiteOf(p *Package) (Site, bool) {
	if i := e.siteIndex(p); i >= 0 {
		return e.Sites[i], true
	}
	return Site{}, false
}

// Borrowed reports whether p is read from a folder that is not one of
// the environment's own site folders: the user site, the base
// interpreter's, a folder a .pth file adds.
func (e *Env) Borrowed(p *Package) bool {
	i := e.siteIndex(p)
	return i >= 0 && e.Sites[i].From != SiteOwn
}

// AheadOfOwn reports whether p is read from a folder that import searches
// before the environment's own site-packages: a user site before a conda
// env's or a prefix's, a folder a .pth import line puts at the front. A
// package installed into the environment then never shadows it, so a
// reinstall there cannot change what import loads; the copy has to go
// from where it is.
func (e *Env) AheadOfOwn(p *Package) bool {
	i := e.siteIndex(p)
	if i < 0 || e.Sites[i].From == SiteOwn {
		return false
	}
	own := e.ownIndex()
	return own < 0 || i < own
}

// Origin says where import loads p from when that is not one of the
// environment's own site folders: the folder, and in words whose it is
// and where it comes on the import path ("the user site, searched before
// the environment's own site-packages"); ok is false for a package of
// the environment's own.
func (e *Env) Origin(p *Package) (folder, says string, ok bool) {
	i := e.siteIndex(p)
	if i < 0 || e.Sites[i].From == SiteOwn {
		return "", "", false
	}
	s := e.Sites[i]
	var whose string
	switch s.From {
	case SiteUser:
		whose = "the user site"
	case SiteBase:
		whose = "the base interpreter's site-packages"
	case SitePth:
		whose = fmt.Sprintf("put on the import path by line %d of %s", s.Line, s.Pth)
	case SiteEditable:
		whose = fmt.Sprintf("mapped by the editable finder line %d of %s installs", s.Line, s.Pth)
	default:
		whose = "a folder on the import path"
	}
	switch own := e.ownIndex(); {
	case own < 0:
		whose += "; the environment has no site-packages of its own"
	case s.From == SiteEditable:
		whose += ", searched after every folder on the import path"
	case i < own:
		whose += ", searched before the environment's own site-packages"
	default:
		whose += ", searched after the environment's own site-packages"
	}
	return s.Path, whose, true
}
