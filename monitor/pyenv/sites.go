package pyenv

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/sitepath"
)

// InspectOptions says whose user site an inspection reads: Python adds
// the user site of the user running it, found from HOME and
// PYTHONUSERBASE (APPDATA on Windows). Zero values mean this process's.
type InspectOptions struct {
	Home   string              // "": os.UserHomeDir
	Getenv func(string) string // nil: the reader's Disk's
}

// withDefaults is o with the variables and home of rd's disk where o
// names none.
func (o InspectOptions) withDefaults(rd *Reader) InspectOptions {
	if o.Getenv == nil {
		o.Getenv = rd.Getenv
	}
	if o.Home == "" {
		o.Home, _ = disk.UserHomeDir(rd)
	}
	return o
}

// userBase is the user base (site.USER_BASE) for an interpreter of this
// layout; "" when unknown.
func (o InspectOptions) userBase(layout Layout) string {
	return sitepath.UserBase(o.Getenv, o.Home, layout == LayoutWindows)
}

// UserSiteBases are the user bases (site.USER_BASE: ~/.local,
// %APPDATA%\Python, or PYTHONUSERBASE) of o's home and variables that
// hold a user site on the real disk, POSIX's first: the prefixes `pip
// install --user` fills, for the search's places (the managers
// package's user-site entry).
func UserSiteBases(o InspectOptions) []string {
	var out []string
	for _, l := range []Layout{LayoutPOSIX, LayoutWindows} {
		if b := o.userBase(l); b != "" && realReader.isDir(b) && (l == LayoutPOSIX && len(realReader.userSiteVersions(b)) > 0 || l == LayoutWindows && realReader.windowsUserSiteVersion(b) != "") {
			out = append(out, b)
		}
	}
	return out
}

// userSite is the user site for Python py (site.USER_SITE); "" when
// PYTHONNOUSERSITE turns it off or the user base is unknown.
func (o InspectOptions) userSite(layout Layout, py string) string {
	return sitepath.UserSite(o.Getenv, o.Home, layout == LayoutWindows, py)
}

// stdlibVersions lists the X.Y of the standard libraries a POSIX prefix
// holds (lib/pythonX.Y/os.py: the landmark CPython's getpath searches for
// to find its prefix), highest first. A lib that is a link is another
// prefix's.
func (rd *Reader) stdlibVersions(prefix string) []string {
	var out []string
	for _, lib := range []string{"lib", "lib64"} {
		if fi, err := rd.Lstat(filepath.Join(prefix, lib)); err != nil || !fi.IsDir() {
			continue // missing, or a link (usrmerge's /lib -> usr/lib: / is not a prefix)
		}
		ents, err := rd.ReadDir(filepath.Join(prefix, lib))
		if err != nil {
			continue
		}
		for _, e := range ents {
			v := strings.TrimPrefix(e.Name(), "python")
			if v == e.Name() || majorMinor(v) != v || slices.Contains(out, v) {
				continue
			}
			if rd.regularFile(filepath.Join(prefix, lib, e.Name(), "os.py")) {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, CompareXY)
	slices.Reverse(out)
	return out
}

// CompareXY orders Python X.Y versions as numbers, "3.9" before "3.11"
// (the standard libraries the reader finds; Poetry's -pyX.Y suffixes).
func CompareXY(a, b string) int {
	pa, pb := strings.SplitN(a, ".", 2), strings.SplitN(b, ".", 2)
	for i := range 2 {
		x, y := atoiOr(pa, i), atoiOr(pb, i)
		if x != y {
			return x - y
		}
	}
	return 0
}

func atoiOr(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	n := 0
	for _, c := range parts[i] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// windowsStdlib reports whether prefix is a Windows interpreter's
// installation (Lib\os.py, as python.org's installer and conda lay it).
func (rd *Reader) windowsStdlib(prefix string) bool {
	for _, lib := range []string{"Lib", "lib"} {
		if rd.regularFile(filepath.Join(prefix, lib, "os.py")) {
			return true
		}
	}
	return false
}

func (rd *Reader) regularFile(path string) bool {
	fi, err := rd.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func (rd *Reader) isDir(path string) bool {
	fi, err := rd.Stat(path)
	return err == nil && fi.IsDir()
}

// prefixPython picks the X.Y a POSIX prefix's python3 runs: the version
// bin/python3 links to (Debian: python3 -> python3.11), else the highest
// standard library present.
func (rd *Reader) prefixPython(prefix string, versions []string) string {
	if len(versions) == 0 {
		return ""
	}
	for _, name := range []string{"python3", "python"} {
		target, err := rd.Readlink(filepath.Join(prefix, "bin", name))
		if err != nil {
			continue
		}
		if v := strings.TrimPrefix(filepath.Base(target), "python"); slices.Contains(versions, v) {
			return v
		}
	}
	return versions[0]
}

// basePrefix finds the interpreter a venv was made from: pyvenv.cfg's
// base-prefix (virtualenv writes it), else the folder above home
// (home = /usr/bin, a pyenv version's bin) or home itself (Windows:
// home = C:\Python311), whichever holds the standard library.
func (rd *Reader) basePrefix(cfg map[string]string, layout Layout) (string, string) {
	var cands []string
	says := ""
	if bp := cfg["base-prefix"]; bp != "" {
		cands, says = append(cands, bp), "base-prefix = "+bp
	}
	if home := cfg["home"]; home != "" {
		cands = append(cands, filepath.Dir(home), home)
		if says == "" {
			says = "home = " + home
		}
	}
	for _, c := range cands {
		if !filepath.IsAbs(c) {
			continue
		}
		if layout == LayoutWindows && rd.windowsStdlib(c) || layout != LayoutWindows && len(rd.stdlibVersions(c)) > 0 {
			return c, says
		}
	}
	return "", says
}

// importSites works out env.Sites: for a venv its own site-packages, and
// with include-system-site-packages = true the user site and the base
// interpreter's sites after it (CPython's site.venv adds the venv's
// site-packages before the user site); for a conda env or an interpreter
// prefix the user site first, then its own (site.main adds the user site
// before site.getsitepackages). Only folders that exist are listed.
func (in *inspector) importSites(o InspectOptions) {
	env := in.env
	var sites []Site
	add := func(path, from string) {
		if path == "" || !in.rd.isDir(path) || slices.ContainsFunc(sites, func(s Site) bool { return s.Path == path }) {
			return
		}
		sites = append(sites, Site{Path: path, From: from})
	}
	own := in.ownSites
	switch {
	case env.Kind == KindEmbedded && in.embeddedPth != nil:
		env.Sites = in.embeddedSites()
		return
	case env.Kind == KindVenv:
		for _, p := range own {
			add(p, SiteOwn)
		}
		if v, ok := in.cfg["include-system-site-packages"]; ok && sitepath.CfgTrue(v) {
			cfgPath := filepath.Join(env.Path, "pyvenv.cfg")
			add(o.userSite(env.Layout, env.Python), SiteUser)
			base, says := in.rd.basePrefix(in.cfg, env.Layout)
			if base == "" {
				in.evidence(cfgPath, "include-system-site-packages = true, but the base interpreter ("+says+") was not found")
				break
			}
			in.evidence(cfgPath, "include-system-site-packages = true: packages of "+base+" are importable too")
			for _, p := range sitepath.PrefixSites(base, env.Layout == LayoutWindows, env.Python) {
				add(p, SiteBase)
			}
		}
	default:
		if us := o.userSite(env.Layout, env.Python); us != "" && !slices.Contains(own, us) {
			add(us, SiteUser)
		}
		for _, p := range own {
			add(p, SiteOwn)
		}
	}
	env.Sites = in.withPth(sites)
}

// siteWords says whose a site is, for evidence.
func siteWords(s Site) string {
	switch s.From {
	case SiteUser:
		return "the user site"
	case SiteBase:
		return "the base interpreter's site"
	case SitePth:
		return fmt.Sprintf("the folder that line %d of %s adds to the import path", s.Line, s.Pth)
	case SiteEditable:
		return fmt.Sprintf("the folder the editable finder installed by line %d of %s maps %s to, searched after every folder on the import path", s.Line, s.Pth, s.Package)
	}
	return "the environment's own site-packages"
}
