//go:build !windows

package safefs

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// open opens path with O_NONBLOCK, so that a FIFO does not wait for a
// writer in open() itself, then checks what it opened (checkMode, and for
// a file checkFS: not on a kernel pseudo file system); a regular file or
// a directory reads as usual (O_NONBLOCK does not apply to them).
func open(path string, dir bool) (*os.File, error) {
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	fd, err := syscall.Open(path, flags, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, flags, 0)
	}
	if err != nil {
		noteOpen(err)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := checkMode(path, fi.Mode(), dir); err != nil {
		f.Close()
		return nil, err
	}
	if !dir {
		// Listing a pseudo file system's folder does not block; reading
		// its files can.
		if err := checkFS(path, fd); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
