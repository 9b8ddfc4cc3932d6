// Package disk is the one way the environment readers (pyenv, its site
// emulation, uvproject) look at the disk: a small interface the caller
// hands them, as go-nvlib hands its library and root, so that a test can
// give them a tree of its own and a cache can stand in front of the disk,
// and Real, the disk itself, read without letting a FIFO or a device
// block (monitor/safefs).
package disk

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Disk is what a read of an environment needs of the disk and the
// process's variables, and no more: each method is the os (or safefs)
// function of its name. A file is opened only if it is a regular file
// (safefs.ErrNotRegular), a listing only if it is a folder, and a read
// whole stops at its limit (safefs.ErrTooLarge), whatever the disk.
type Disk interface {
	Stat(path string) (fs.FileInfo, error)
	Lstat(path string) (fs.FileInfo, error)
	ReadDir(path string) ([]fs.DirEntry, error)
	ReadFile(path string, limit int64) ([]byte, error)
	// Open opens a regular file to read in parts.
	Open(path string) (io.ReadCloser, error)
	Readlink(path string) (string, error)
	Getenv(name string) string
}

// Real is the disk of this machine and this process's variables: opens
// that never block (a FIFO, a device or a file on a kernel pseudo file
// system is refused), and every descriptor a read lacked counted
// (safefs.OutOfFiles).
type Real struct{}

var _ Disk = Real{}

func (Real) Stat(path string) (fs.FileInfo, error)  { return os.Stat(path) }
func (Real) Lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }

func (Real) ReadDir(path string) ([]fs.DirEntry, error) { return safefs.ReadDir(path) }

func (Real) ReadFile(path string, limit int64) ([]byte, error) {
	return safefs.ReadFile(path, limit)
}

// Open is safefs.Reader: a raw descriptor on Linux, without an
// *os.File's poller registration (most files of a read are read once).
func (Real) Open(path string) (io.ReadCloser, error) {
	r, err := safefs.Reader(path)
	if err != nil {
		return nil, err // never a nil *fdReader in a non-nil interface
	}
	return r, nil
}

func (Real) Readlink(path string) (string, error) { return os.Readlink(path) }
func (Real) Getenv(name string) string            { return os.Getenv(name) }

// UserHomeDir is os.UserHomeDir asked of d's variables: a read for
// another user's home is a disk whose variables say so.
func UserHomeDir(d Disk) (string, error) {
	name := "HOME"
	switch runtime.GOOS {
	case "windows":
		name = "USERPROFILE"
	case "plan9":
		name = "home"
	}
	if v := d.Getenv(name); v != "" {
		return v, nil
	}
	return "", errors.New("$" + name + " is not defined")
}

// maxLinks bounds the links EvalSymlinks follows, as the kernel's own
// limit (40) does.
const maxLinks = 40

// EvalSymlinks is filepath.EvalSymlinks on d: path made absolute, each
// of its components looked at in turn (Lstat) and the links among them
// followed (Readlink), so that a reader resolving a link sees the disk
// it was given. A component that is not there is fs.ErrNotExist.
func EvalSymlinks(d Disk, path string) (string, error) {
	if _, ok := d.(Real); ok {
		return filepath.EvalSymlinks(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	todo := filepath.Clean(abs)
	done := filepath.VolumeName(todo) + string(filepath.Separator)
	todo = todo[len(done):]
	for hops := 0; todo != ""; {
		name, rest := cutSep(todo)
		todo = rest
		switch name {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		p := filepath.Join(done, name)
		fi, err := d.Lstat(p)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if todo != "" && !fi.IsDir() {
				return "", &fs.PathError{Op: "lstat", Path: p, Err: safefs.ErrNotDir}
			}
			done = p
			continue
		}
		if hops++; hops > maxLinks {
			return "", &fs.PathError{Op: "evalsymlinks", Path: path, Err: errors.New("too many links")}
		}
		target, err := d.Readlink(p)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			done = filepath.VolumeName(target) + string(filepath.Separator)
			target = target[len(done):]
		}
		todo = filepath.Join(target, todo)
	}
	return done, nil
}

// cutSep splits path at its first separator.
func cutSep(path string) (first, rest string) {
	for i := 0; i < len(path); i++ {
		if os.IsPathSeparator(path[i]) {
			return path[:i], path[i+1:]
		}
	}
	return path, ""
}
