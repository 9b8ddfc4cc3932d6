package pyenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/sitepath"
)

// prefix recognizes an interpreter's own installation, which has no
// pyvenv.cfg and no conda-meta: a POSIX prefix with lib/pythonX.Y/os.py
// (/usr, /usr/local, ~/.pyenv/versions/3.11.7, a uv-installed Python), a
// Windows one with Lib\os.py (C:\Python311), or the user base (~/.local,
// %APPDATA%\Python) whose lib/pythonX.Y/site-packages is the user site.
// It fills the environment's kind, layout, Python and own sites.
func (in *inspector) prefix(o InspectOptions) bool {
	env, root := in.env, in.env.Path
	switch {
	case in.embedded(o):
		return true
	case in.rd.windowsStdlib(root):
		env.Kind, env.Layout = KindPrefix, LayoutWindows
		env.Python = windowsPython(in.top)
		in.evidence(filepath.Join(root, "Lib", "os.py"), "the standard library of a Windows interpreter's own installation")
		in.ownSites = sitepath.PrefixSites(root, true, env.Python)
	case len(in.rd.stdlibVersions(root)) > 0:
		vs := in.rd.stdlibVersions(root)
		env.Kind, env.Python = KindPrefix, in.rd.prefixPython(root, vs)
		in.evidence(filepath.Join(root, "lib", "python"+env.Python, "os.py"),
			"the standard library of Python "+env.Python+": an interpreter's own installation")
		in.ownSites = sitepath.PrefixSites(root, false, env.Python)
	case in.rd.isUserBase(root, o) && in.rd.windowsUserSiteVersion(root) == "":
		vs := in.rd.userSiteVersions(root)
		if len(vs) == 0 {
			return false
		}
		env.Kind, env.Python = KindPrefix, vs[0]
		in.ownSites = []string{filepath.Join(root, "lib", "python"+env.Python, "site-packages")}
		in.evidence(in.ownSites[0], "the user site (pip install --user) of Python "+env.Python)
	case in.rd.isUserBase(root, o):
		py := in.rd.windowsUserSiteVersion(root)
		if py == "" {
			return false
		}
		env.Kind, env.Layout, env.Python = KindPrefix, LayoutWindows, py
		in.ownSites = []string{filepath.Join(root, "Python"+strings.ReplaceAll(py, ".", ""), "site-packages")}
		in.evidence(in.ownSites[0], "the user site (pip install --user) of Python "+py)
	default:
		return false
	}
	for _, s := range in.ownSites {
		if in.rd.isDir(s) {
			env.SitePackages = s
			break
		}
	}
	return true
}

// windowsPython reads X.Y from the python3XY.dll beside a Windows
// interpreter.
func windowsPython(top *dirIndex) string {
	for _, e := range top.entries {
		n := strings.ToLower(e.Name())
		if v, ok := strings.CutPrefix(n, "python3"); ok && strings.HasSuffix(v, ".dll") {
			if minor := strings.TrimSuffix(v, ".dll"); isDigits(minor) {
				return "3." + minor
			}
		}
	}
	return ""
}

// userSiteVersions lists the X.Y of a POSIX user base's user sites
// (lib/pythonX.Y/site-packages), highest first.
func (rd *Reader) userSiteVersions(base string) []string {
	ents, err := rd.ReadDir(filepath.Join(base, "lib"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		v := strings.TrimPrefix(e.Name(), "python")
		if v != e.Name() && majorMinor(v) == v && rd.isDir(filepath.Join(base, "lib", e.Name(), "site-packages")) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, CompareXY)
	slices.Reverse(out)
	return out
}

// windowsUserSiteVersion reads X.Y from a Windows user base's
// PythonXY\site-packages, the highest.
func (rd *Reader) windowsUserSiteVersion(base string) string {
	ents, err := rd.ReadDir(base)
	if err != nil {
		return ""
	}
	best := ""
	for _, e := range ents {
		d, ok := strings.CutPrefix(e.Name(), "Python")
		if !ok || len(d) < 2 || !isDigits(d) || !rd.isDir(filepath.Join(base, e.Name(), "site-packages")) {
			continue
		}
		if v := d[:1] + "." + d[1:]; best == "" || CompareXY(v, best) > 0 {
			best = v
		}
	}
	return best
}

// sameDir reports whether a and b name the same folder.
func (rd *Reader) sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := rd.Stat(a)
	fb, errB := rd.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// isUserBase reports whether dir is a user base holding a user site: the
// one o names (PYTHONUSERBASE, ~/.local, %APPDATA%\Python), or any folder
// named .local (POSIX) or Python (Windows) laid out as one, so a user base
// read for another user or from a search with its own home is one too.
func (rd *Reader) isUserBase(dir string, o InspectOptions) bool {
	if dir == "" {
		return false
	}
	posix := len(rd.userSiteVersions(dir)) > 0
	windows := rd.windowsUserSiteVersion(dir) != ""
	if !posix && !windows {
		return false
	}
	base := filepath.Base(dir)
	if posix && base == ".local" || windows && strings.EqualFold(base, "Python") {
		return true
	}
	if o.Getenv == nil && o.Home == "" {
		o = o.withDefaults(rd)
	}
	return rd.sameDir(dir, o.userBase(LayoutPOSIX)) || rd.sameDir(dir, o.userBase(LayoutWindows))
}
