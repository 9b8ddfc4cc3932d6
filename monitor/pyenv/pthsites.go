package pyenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/sitepath"
)

// list lists a site folder once per inspection: the .pth files and the
// packages are both read from the listing.
func (in *inspector) list(dir string) (*dirIndex, error) {
	if l, ok := in.listed[dir]; ok {
		return l.ix, l.err
	}
	ix, err := in.rd.listDir(dir)
	if in.listed == nil {
		in.listed = map[string]listing{}
	}
	in.listed[dir] = listing{ix, err}
	return ix, err
}

// pipState is whether the environment's site-packages holds pip, from
// its listing when the read listed it.
func (in *inspector) pipState() pipState {
	site := in.env.SitePackages
	if site == "" {
		return pipAbsent
	}
	ok := false
	if l, listed := in.listed[site]; listed && l.ix != nil {
		// pip's folder by its exact name, as import finds it on a
		// file system that tells case
		name, dir := l.ix.isDir(site, "pip")
		ok = dir && name == "pip"
	} else {
		ok = in.rd.isDir(filepath.Join(site, "pip"))
	}
	if ok {
		return pipPresent
	}
	return pipAbsent
}

type listing struct {
	ix  *dirIndex
	err error
}

// indexSite lists one site; an egg folder's EGG-INFO is its
// distribution's metadata (eggDist). An editable finder's site is the one package
// folder its MAPPING names, indexed under the import name it serves.
func (in *inspector) indexSite(s Site) (*sitePackages, error) {
	if s.From != SiteEditable {
		ix, err := in.list(s.Path)
		if err != nil {
			return nil, err
		}
		sp := indexSitePackages(s.Path, ix)
		eggDist(sp)
		return sp, nil
	}
	fi, err := in.rd.Stat(s.Path)
	if err != nil {
		return nil, err
	}
	e := fs.FileInfoToDirEntry(fi)
	ix := &dirIndex{rd: in.rd, entries: []os.DirEntry{e}, byLower: map[string]os.DirEntry{strings.ToLower(s.Package): e}}
	return indexSitePackages(filepath.Dir(s.Path), ix), nil
}

// holdsImport reports whether the site has the import folder of the
// distribution name.
func (sp *sitePackages) holdsImport(name string) bool {
	_, ok := sp.ix.isDir(sp.path, importName(name))
	return ok
}

// pthSite is the site that holds the .pth file which added s; nil for a
// site Python adds itself.
func pthSite(s Site, sites []*sitePackages, from []Site) *sitePackages {
	if s.Pth == "" {
		return nil
	}
	dir := filepath.Dir(s.Pth)
	for k, f := range from {
		if f.From != SiteEditable && f.Path == dir {
			return sites[k]
		}
	}
	return nil
}

// lendDists gives a folder that a .pth file adds the dist-infos of the
// packages whose code it holds without their metadata, from the site
// holding the .pth file: a PEP 660 editable install keeps its dist-info
// in site-packages and its code where the .pth file points.
func lendDists(sites []*sitePackages, from []Site) {
	for i, sp := range sites {
		meta := pthSite(from[i], sites, from)
		if meta == nil {
			continue
		}
		for name, dists := range meta.dists {
			if len(sp.dists[name]) > 0 || !sp.holdsImport(name) {
				continue
			}
			for _, d := range dists {
				d.site = meta.path
				sp.dists[name] = append(sp.dists[name], d)
			}
		}
	}
}

// servedLater reports whether sp holds only the metadata of name, whose
// code a later site added by one of sp's .pth files holds: an editable
// install, which import loads from there (and whose metadata is read
// with it, lendDists), not a half-deleted one.
func servedLater(name string, sp *sitePackages, later []*sitePackages, laterFrom []Site) bool {
	if len(sp.dists[name]) == 0 || sp.holdsImport(name) {
		return false
	}
	for k, l := range later {
		if laterFrom[k].Pth != "" && filepath.Dir(laterFrom[k].Pth) == sp.path && l.holdsImport(name) {
			return true
		}
	}
	return false
}

// loadsEvidence says why import loads name from s, a site other than the
// environment's own: for a folder a .pth file adds, which file and line.
func loadsEvidence(name string, s Site) Evidence {
	mod := importName(name)
	switch s.From {
	case SitePth:
		return Evidence{File: s.Pth, Says: fmt.Sprintf("line %d puts %s on the import path, the first folder on it that holds %s: import %s loads the copy there", s.Line, s.Path, mod, mod)}
	case SiteEditable:
		return Evidence{File: s.Pth, Says: fmt.Sprintf("line %d installs setuptools' editable finder, which maps %s to %s; no folder on the import path holds %s, so import %s loads it from there", s.Line, mod, s.Path, mod, mod)}
	}
	return Evidence{File: s.Path, Says: "import " + mod + " loads this copy: " + siteWords(s) + " is the first folder on the import path that holds it"}
}

// maxUnreadSaid bounds the unread .pth lines named in evidence.
const maxUnreadSaid = 5

// sayUnread names, on the environment, the .pth import lines GPU Canary
// did not follow when no torch was found: code it does not run could be
// what puts torch on the import path.
func (in *inspector) sayUnread() {
	for i, l := range in.unread {
		if i == maxUnreadSaid {
			in.evidence(l.File, fmt.Sprintf("and %d more .pth import lines not followed", len(in.unread)-i))
			return
		}
		in.evidence(l.File, unreadSays(l))
	}
}

// sayUnreadIn adds to a package read from site without its import folder
// the unread import lines of site's .pth files: an editable install
// served by code GPU Canary does not run looks half-deleted to it.
func (in *inspector) sayUnreadIn(p *Package, site string) {
	n := 0
	for _, l := range in.unread {
		if filepath.Dir(l.File) == site && n < maxUnreadSaid {
			p.Evidence = append(p.Evidence, Evidence{File: l.File, Says: unreadSays(l)})
			n++
		}
	}
}

func unreadSays(l sitepath.Line) string {
	return fmt.Sprintf("line %d runs code GPU Canary does not run (%s): a package it puts on the import path is not seen", l.N, shortCode(l.Code))
}

// shortCode is an import line as evidence quotes it: at most 100 bytes.
func shortCode(code string) string {
	if len(code) > 100 {
		return strings.ToValidUTF8(code[:100], "") + "…"
	}
	return code
}
