package managers

import "slices"

// UninstallCommand is pip's uninstall of names, run as the environment's
// interpreter: its own pip, or the host's aimed at it with --python. pip
// removes the first copy of each that the interpreter's import path
// holds, wherever that is (checked with pip 23 on a prefix whose user
// site holds a CPU torch above its own CUDA torch: the user site's goes,
// the prefix's stays), which is how a copy that shadows the
// environment's own is taken away. r.Specs, r.Index and r.Form are not
// used.
func UninstallCommand(r ReinstallRequest, names []string) Reinstall {
	if hasPip(r.Env) {
		return Reinstall{Argv: slices.Concat([]string{r.Python, "-m", "pip", "uninstall", "-y"}, names),
			Reason: "the environment's own pip removes it"}
	}
	host, which := r.hostPython()
	return Reinstall{Argv: slices.Concat(host, []string{"-m", "pip", "--python", r.Python, "uninstall", "-y"}, names),
		Reason: "the environment has no pip of its own, so " + which + " removes it, run as the environment's interpreter (--python, pip 22.3 or newer)"}
}
