// Package envsearch is the search for Python environments: where a
// machine's environments are (Search: the active environment's
// variables, the working folder, the remembered roots, each manager's own
// places, a bounded walk of home and of the folders apps are unpacked
// into) and what a path a person typed stands for (Resolve, ResolveArg,
// Given). What a manager is and where it keeps its environments is data
// in the managers table (pyenv's entries joined to monitor/pyenv/managers'
// places and project rules), which this package reads and never extends:
// a new manager is one entry there. Reading an environment found is
// pyenv's (Inspect).
package envsearch

import (
	"os"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// The managers table and what the walk asks of it, read once: the walk
// consults them for every folder it lists.
var (
	table      = managers.Managers()
	envMarkers = pyenv.EnvMarkers()
	venvNames  = managers.VenvNames()
)

// kernelLimit bounds the read of one kernel.json: a few hundred bytes,
// never more than a small file.
const kernelLimit = 256 << 10

// exists reports whether path names anything.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// isDir reports whether path is a folder (or a link to one).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
