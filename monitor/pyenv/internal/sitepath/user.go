package sitepath

import (
	"path/filepath"
	"strings"
)

// UserBase is the user base (site.USER_BASE) for an interpreter on
// Windows or POSIX: PYTHONUSERBASE, else ~/.local (POSIX) or %APPDATA%\Python
// (Windows), as CPython's site._getuserbase computes it; "" when unknown.
func UserBase(getenv func(string) string, home string, windows bool) string {
	if b := getenv("PYTHONUSERBASE"); b != "" {
		return b
	}
	if windows {
		if ad := getenv("APPDATA"); ad != "" {
			return filepath.Join(ad, "Python")
		}
		return ""
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local")
}

// UserSite is the user site for Python py (site.USER_SITE):
// USER_BASE/lib/pythonX.Y/site-packages (posix_user scheme) or
// USER_BASE\PythonXY\site-packages (nt_user); "" when PYTHONNOUSERSITE
// turns it off or the user base is unknown.
func UserSite(getenv func(string) string, home string, windows bool, py string) string {
	if py == "" || getenv("PYTHONNOUSERSITE") != "" {
		return ""
	}
	base := UserBase(getenv, home, windows)
	if base == "" {
		return ""
	}
	if windows {
		return filepath.Join(base, "Python"+strings.ReplaceAll(py, ".", ""), "site-packages")
	}
	return filepath.Join(base, "lib", "python"+py, "site-packages")
}

// PrefixSites lists where a prefix's interpreter looks for packages, in
// sys.path order, whether or not each exists: lib64 and lib
// site-packages (CPython's posix_prefix scheme; Fedora puts platform
// packages in lib64), then Debian's dist-packages (Debian's patched
// site.getsitepackages: /usr/local/lib/pythonX.Y/dist-packages,
// /usr/lib/python3/dist-packages, /usr/lib/pythonX.Y/dist-packages).
// Windows: Lib\site-packages.
func PrefixSites(prefix string, windows bool, py string) []string {
	if windows {
		return []string{filepath.Join(prefix, "Lib", "site-packages")}
	}
	ver := "python" + py
	return []string{
		filepath.Join(prefix, "lib64", ver, "site-packages"),
		filepath.Join(prefix, "lib", ver, "site-packages"),
		filepath.Join(prefix, "local", "lib", ver, "dist-packages"),
		filepath.Join(prefix, "lib", "python3", "dist-packages"),
		filepath.Join(prefix, "lib", ver, "dist-packages"),
	}
}

// CfgTrue reads a pyvenv.cfg boolean as site.py does: "true",
// case-insensitively.
func CfgTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
