package pyenv

import "path/filepath"

// ExternallyManaged reports whether the environment's interpreter is
// marked as managed by the system (PEP 668: EXTERNALLY-MANAGED beside
// its standard library, as Debian's /usr/lib/python3.11 has): pip then
// refuses to install or uninstall anything without
// --break-system-packages.
func ExternallyManaged(env *Env) bool { return realReader.ExternallyManaged(env) }

// ExternallyManaged is the package's ExternallyManaged looking at r's
// disk.
func (r *Reader) ExternallyManaged(env *Env) bool {
	rd := r.ready()
	var lib string
	switch {
	case env.Layout == LayoutWindows:
		lib = filepath.Join(env.Path, "Lib")
	case env.Python != "":
		lib = filepath.Join(env.Path, "lib", "python"+env.Python)
	default:
		return false
	}
	_, err := rd.Stat(filepath.Join(lib, "EXTERNALLY-MANAGED"))
	return err == nil
}
