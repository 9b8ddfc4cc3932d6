package pyenv

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/walk"
)

// What makes a folder an environment, read from the folder alone: the
// search (envsearch) asks these of the folders it finds, and reading
// asks them of the paths it is given.

// IsEnv reports whether dir is a Python environment: it has some manager's
// marker (a pyvenv.cfg file for venv, virtualenv and uv; a conda-meta
// folder for conda and mamba), or it is an interpreter's own installation
// (a standard library at lib/pythonX.Y/os.py or Lib\os.py) or a user
// base holding a user site. A file marker that is there but is no
// regular file (a FIFO pyvenv.cfg) still makes an environment, as it
// does for the search's walk: Inspect then says what it is,
// instead of the environment being reported as none.
func IsEnv(dir string) bool {
	for _, mk := range envMarkers {
		fi, err := os.Stat(filepath.Join(dir, mk.Name))
		if err == nil && mk.Dir == fi.IsDir() {
			return true
		}
	}
	return realReader.windowsStdlib(dir) || len(realReader.stdlibVersions(dir)) > 0 || realReader.isUserBase(dir, InspectOptions{}) || realReader.isEmbedded(dir)
}

// PrefixListing recognizes an interpreter's installation at path from
// its listing ents (a lib or Lib folder beside bin, include or
// python.exe), then from its standard library.
//
// The search's walk asks it of each folder it lists (o says whose home
// and variables a user base is judged by), so that a prefix is known
// from the one listing it already read.
func PrefixListing(path string, ents []os.DirEntry, o InspectOptions) bool {
	if walk.Find(ents, "python.exe") != nil {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		if _, ok := embeddedListing(names); ok {
			return true // an embedded Python (embedded.go)
		}
	}
	hasLib := walk.Find(ents, "lib") != nil || walk.Find(ents, "Lib") != nil
	if !hasLib || walk.Find(ents, "bin") == nil && walk.Find(ents, "include") == nil && walk.Find(ents, "python.exe") == nil {
		return false
	}
	return realReader.windowsStdlib(path) || len(realReader.stdlibVersions(path)) > 0 || realReader.isUserBase(path, o)
}

// InterpreterHome is where an interpreter's environment is, from its
// path alone: the folder above bin/ or Scripts/, else its own folder.
func InterpreterHome(exe string) string {
	dir := filepath.Dir(exe)
	switch strings.ToLower(filepath.Base(dir)) {
	case "bin", "scripts":
		return filepath.Dir(dir)
	}
	return dir
}

// EnvOfInterpreter finds the environment an interpreter belongs to: the
// folder above its bin/ or Scripts/ (or, for a Windows conda env or
// python.org install, the folder python.exe is in), when that is an
// environment. The path is tried as given first, so that .venv/bin/python
// (a link to /usr/bin/python3.11) is the venv's, then with its links
// resolved (a link elsewhere to an environment's interpreter).
func EnvOfInterpreter(exe string) (string, bool) {
	for range 2 {
		dir := filepath.Dir(exe)
		switch strings.ToLower(filepath.Base(dir)) {
		case "bin", "scripts":
			if p := filepath.Dir(dir); IsEnv(p) {
				return p, true
			}
		}
		if IsEnv(dir) {
			return dir, true
		}
		real, err := filepath.EvalSymlinks(exe)
		if err != nil || real == exe {
			break
		}
		exe = real
	}
	return "", false
}
