package procs

import (
	"path/filepath"
	"strings"
)

// pathWithin reports whether path is dir or lies inside it, comparing as
// the platform does (foldPath: on Windows without regard to case or to /
// and \). A neighbour whose name only starts the same (.venv2 beside
// .venv) is not inside.
func pathWithin(path, dir string) bool {
	path, dir = foldPath(path), foldPath(dir)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// PathWithin is pathWithin for other packages: whether path is dir or
// lies inside it, as the platform compares paths.
func PathWithin(path, dir string) bool { return pathWithin(path, dir) }
