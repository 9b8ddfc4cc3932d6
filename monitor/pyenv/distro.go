package pyenv

import (
	"path/filepath"
	"strings"
)

// DistroManaged returns the folder of a torch that the operating
// system's package manager installed ("" when it is not one): torch read
// from the prefix's own dist-packages (Debian's python3-torch in
// /usr/lib/python3/dist-packages), in an interpreter marked as managed
// by the system (PEP 668's EXTERNALLY-MANAGED). pip refuses to change
// it, and must not: apt owns those files. A copy that `sudo pip install`
// put in /usr/local/lib/pythonX.Y/dist-packages is pip's, not the
// distribution's.
func DistroManaged(env *Env) string { return realReader.DistroManaged(env) }

// DistroManaged is the package's DistroManaged looking at r's disk
// (EXTERNALLY-MANAGED).
func (r *Reader) DistroManaged(env *Env) string {
	t := env.Torch()
	if t == nil || t.Site == "" || env.Layout == LayoutWindows || !r.ExternallyManaged(env) {
		return ""
	}
	if t.Installer != "" && t.Installer != InstallerUnknown {
		return ""
	}
	site := filepath.Clean(t.Site)
	for _, d := range []string{
		filepath.Join(env.Path, "lib", "python3", "dist-packages"),
		filepath.Join(env.Path, "lib", "python"+env.Python, "dist-packages"),
	} {
		if site == d && !strings.Contains(filepath.ToSlash(site), "/local/") {
			return site
		}
	}
	return ""
}
