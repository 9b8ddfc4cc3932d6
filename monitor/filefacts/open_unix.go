//go:build unix

package filefacts

import (
	"fmt"
	"io"
	"io/fs"
	"syscall"

	"github.com/gpucanary/gpucanary/monitor/owned"
)

// File is a regular file open for reading on its raw descriptor: a run
// opens every library of every environment and one facts file for each,
// and an *os.File would add the poller's flags and registration to each.
type File struct {
	fd int
	st syscall.Stat_t
}

// Open opens the regular file at path for reading. O_NONBLOCK keeps a
// FIFO put there since it was stat'ed from blocking the open; anything
// but a regular file is an error once opened.
func Open(path string) (*File, error) { return open(path, 0) }

func open(path string, flags int) (*File, error) {
	flags |= syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	fd, err := syscall.Open(path, flags, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, flags, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := &File{fd: fd}
	err = syscall.Fstat(fd, &f.st)
	for err == syscall.EINTR {
		err = syscall.Fstat(fd, &f.st)
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if f.st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("opening %s: not a regular file", path)
	}
	return f, nil
}

// openOwned opens a file of the store's own folder: never through a
// link (O_NOFOLLOW), and only when it passes owned.Opened (the folder
// passed owned.Check when the store took it).
func openOwned(path string) (*File, error) {
	f, err := open(path, syscall.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	if err := owned.Opened(path, &f.st, owned.Policy{}); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.st.Size }

// SameFile is whether the file opened is the one fi (a stat of its path
// before) describes: a file renamed over it since is another.
func (f *File) SameFile(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == uint64(f.st.Dev) && st.Ino == f.st.Ino // Dev is int32 on some systems
}

// ReadAt reads at an offset (pread), retrying a signal's interruption.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(f.fd, p[n:], off+int64(n))
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Close closes the descriptor.
func (f *File) Close() error { return syscall.Close(f.fd) }
