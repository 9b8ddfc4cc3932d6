package procs

import "strings"

// foldPath is the form in which two Windows paths that name the same
// file compare equal: NTFS compares names without regard to case, and
// Windows takes / for \ (`--python c:/Proj/.venv` installs into
// C:\proj\.venv).
func foldPath(p string) string {
	return strings.ToLower(strings.ReplaceAll(p, "/", `\`))
}
