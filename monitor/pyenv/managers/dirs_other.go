//go:build !linux && !windows

package managers

import "strings"

// platformToolDirs: other Unix systems are read as Linux (macOS's
// ~/Library folders are not searched).
func platformToolDirs(w Where) toolDirs { return unixToolDirs(w) }

// normcase is Python's os.path.normcase: nothing on POSIX.
func normcase(p string) string { return p }

// casefold is how hatch keys a project's path: casefolded on macOS.
func casefold(p string) string { return strings.ToLower(p) }
