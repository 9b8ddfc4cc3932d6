package words

import (
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Manager is the one word every view gives for what keeps an
// environment: its installer (uv, pip, conda, embedded) when that is
// known, else the manager whose folder it was found in (pyenv, asdf,
// hatch: "one of pyenv's environments" in one command and "unknown" in
// another told a person two stories about one folder), else "unknown".
func Manager(e monitor.EnvReport) string {
	if e.Env != nil && e.Installer != "" && e.Installer != pyenv.InstallerUnknown {
		return e.Installer
	}
	if managerVia(e.Via) {
		return e.Via
	}
	return pyenv.InstallerUnknown
}

// managerVia reports whether via (monitor.EnvReport.Via) names a manager
// rather than how a search found the folder (an argument, the current
// folder, home, a root) or an active environment's variable.
func managerVia(via string) bool {
	switch via {
	case "", "argument", "cwd", "home", "root":
		return false
	}
	return strings.ToUpper(via) != via
}

// EnvMeta is what check, watch and the windows say beside an
// environment's path, in this order: the app whose environment it is,
// its manager, its Python, a Windows layout, guarded.
func EnvMeta(e monitor.EnvReport) []string {
	var meta []string
	if e.App != "" {
		meta = append(meta, e.App)
	}
	meta = append(meta, Manager(e))
	if e.Python != "" {
		meta = append(meta, "Python "+e.Python)
	}
	if e.Layout == pyenv.LayoutWindows {
		meta = append(meta, "Windows layout")
	}
	if e.Guarded {
		meta = append(meta, "guarded")
	}
	return meta
}
