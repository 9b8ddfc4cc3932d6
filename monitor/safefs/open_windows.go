//go:build windows

package safefs

import (
	"os"
	"slices"
	"strings"
)

// open checks what path is before opening it. Windows has no FIFOs in
// the file system (named pipes live under \\.\pipe\), so a stat first is
// enough to keep devices and such out.
func open(path string, dir bool) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkMode(path, fi.Mode(), dir); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		noteOpen(err)
	}
	return f, err
}

func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
