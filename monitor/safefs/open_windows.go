//go:build windows

package safefs

import (
	"fmt"
	"io"
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

func reader(path string) (io.ReadCloser, error) { return open(path, false) }

func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

// readFile is ReadFile through an *os.File.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A file that says it is too long is refused before it is read: a
	// 300 MB file is not read whole to learn what its size already says.
	// (Files that say 0, as procfs does, are still read up to the limit.)
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, fmt.Errorf("reading %s: %w (%d bytes; it has %d)", path, ErrTooLarge, limit, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("reading %s: %w (%d bytes)", path, ErrTooLarge, limit)
	}
	return data, nil
}
