// Package safefs reads what users, their tools and other users leave on
// disk without letting it hang GPU Canary. A FIFO where torch/version.py
// belongs blocks a plain open() until someone writes to it, forever, and
// with it every environment read after it and the shutdown. Here an
// open never waits: anything but a regular file (or, for ReadDir, a
// directory) is refused before it is read, with ErrNotRegular, and on
// Linux so is a file on a kernel pseudo file system (a symlink to /proc/
// kmsg, whose read waits for the next kernel message), with ErrPseudoFS.
//
// Reads on a hung filesystem (a dead NFS mount) can still block in the
// kernel; callers that must stay responsive give each read a deadline
// (inspect.InspectOne does).
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned for a path that is a FIFO, a socket or a
// device where a file (or a folder) was expected.
var ErrNotRegular = errors.New("not a regular file")

// ErrPseudoFS is returned on Linux for a file on a kernel pseudo file
// system (procfs, sysfs, debugfs, tracefs, cgroup, ...): a regular file by
// its mode whose reads the kernel answers, and can hold forever.
var ErrPseudoFS = errors.New("on a kernel pseudo file system")

// Open opens path for reading if it is a regular file.
func Open(path string) (*os.File, error) { return open(path, false) }

// Reader opens path for reading in parts if it is a regular file, as Open
// does, as a plain reader: on Linux a raw descriptor, not an *os.File
// (most of an environment's reads are of small files read once).
func Reader(path string) (io.ReadCloser, error) { return reader(path) }

// OpenDir opens path for listing if it is a directory (for a listing
// read in parts, f.ReadDir(n)).
func OpenDir(path string) (*os.File, error) { return open(path, true) }

// ReadFile reads at most limit bytes of the regular file at path; a
// longer file is an error wrapping ErrTooLarge, so a huge file planted
// where a small one belongs is never read whole.
func ReadFile(path string, limit int64) ([]byte, error) { return readFile(path, limit) }

// ErrTooLarge is wrapped by ReadFile's error for a file over its limit.
var ErrTooLarge = errors.New("file larger than the read limit")

// ErrNotDir is the error for a folder asked for where something else is.
var ErrNotDir = errors.New("not a directory")

// ReadDir lists the directory at path, sorted by name, as os.ReadDir
// does, refusing anything that is not a directory before opening it
// could block.
func ReadDir(path string) ([]os.DirEntry, error) {
	f, err := open(path, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	sortEntries(ents)
	if err != nil {
		return ents, &fs.PathError{Op: "readdirent", Path: path, Err: err}
	}
	return ents, nil
}

// checkMode accepts a regular file, or a directory when dir is set.
func checkMode(path string, mode fs.FileMode, dir bool) error {
	switch {
	case dir && mode.IsDir():
		return nil
	case !dir && mode.IsRegular():
		return nil
	case dir:
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotDir, describe(mode))}
	}
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, describe(mode))}
}

func describe(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode.IsDir():
		return "a directory"
	}
	return mode.Type().String()
}
