//go:build !windows

package safefs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// openFD opens path with O_NONBLOCK, so that a FIFO does not wait for a
// writer in open() itself, then checks what it opened (checkMode, and for
// a file checkFS: not on a kernel pseudo file system); a regular file or
// a directory reads as usual (O_NONBLOCK does not apply to them). It
// returns the raw descriptor, which the caller closes, and its size.
func openFD(path string, dir bool) (int, int64, error) {
	if dir {
		return openDirFD(path)
	}
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	fd, err := syscall.Open(path, flags, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, flags, 0)
	}
	if err != nil {
		noteOpen(err)
		return -1, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := checkMode(path, statMode(uint32(st.Mode)), dir); err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	if !dir {
		// Listing a pseudo file system's folder does not block; reading
		// its files can.
		if err := checkFS(path, fd, uint64(st.Dev)); err != nil { // Dev is int32 on some systems
			syscall.Close(fd)
			return -1, 0, err
		}
	}
	return fd, st.Size, nil
}

// openDirFD opens a directory with O_DIRECTORY, which the kernel refuses
// (ENOTDIR) for anything else before opening it, a FIFO included: no
// O_NONBLOCK is needed, so the *os.File made of it is not handed to the
// poller (its flags asked, its registration tried: two system calls more
// for every folder of every environment), and no stat after it either.
func openDirFD(path string) (int, int64, error) {
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_DIRECTORY
	fd, err := syscall.Open(path, flags, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, flags, 0)
	}
	switch {
	case err == syscall.ENOTDIR:
		// say what it is, as checkMode does
		if fi, serr := os.Stat(path); serr == nil {
			return -1, 0, checkMode(path, fi.Mode(), true)
		}
		return -1, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	case err != nil:
		noteOpen(err)
		return -1, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, 0, nil
}

func fstat(fd int, st *syscall.Stat_t) error {
	err := syscall.Fstat(fd, st)
	for err == syscall.EINTR {
		err = syscall.Fstat(fd, st)
	}
	return err
}

// statMode is the fs.FileMode type bits of a stat's mode (what checkMode
// looks at).
func statMode(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// fdReader reads a raw descriptor (Reader's): a file read in parts
// without an *os.File, whose poller registration and flags cost two
// system calls more per file.
type fdReader struct{ fd int }

func (r *fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(r.fd, p)
		switch {
		case err == syscall.EINTR || err == syscall.EAGAIN:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *fdReader) Close() error { return syscall.Close(r.fd) }

func reader(path string) (io.ReadCloser, error) {
	fd, _, err := openFD(path, false)
	if err != nil {
		return nil, err
	}
	return &fdReader{fd}, nil
}

func open(path string, dir bool) (*os.File, error) {
	fd, _, err := openFD(path, dir)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readFile is ReadFile on the raw descriptor: an environment's read is
// mostly small files, and an *os.File around each cost as many system
// calls again (the poller's registration, flags, a second stat) as the
// read itself.
func readFile(path string, limit int64) ([]byte, error) {
	fd, size, err := openFD(path, false)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	// A file that says it is too long is refused before it is read: a
	// 300 MB file is not read whole to learn what its size already says.
	// (Files that say 0, as procfs does, are still read up to the limit.)
	if size > limit {
		return nil, fmt.Errorf("reading %s: %w (%d bytes; it has %d)", path, ErrTooLarge, limit, size)
	}
	want := size + 1 // one more than it says, to see that it ends there
	if size == 0 {
		want = min(limit+1, 512)
	}
	buf := make([]byte, 0, want)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, fmt.Errorf("reading %s: %w (%d bytes)", path, ErrTooLarge, limit)
			}
			buf = slices.Grow(buf, int(min(int64(cap(buf)), limit+1-int64(len(buf)))))
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, &fs.PathError{Op: "read", Path: path, Err: err})
		}
		if n <= 0 {
			break
		}
		short := n < cap(buf)-len(buf)
		buf = buf[:len(buf)+n]
		// A regular file reads short only at its end: once it has given
		// what its size said, a short read is the end (no read of 0
		// bytes to learn it).
		if short && size > 0 && int64(len(buf)) >= size {
			break
		}
	}
	if int64(len(buf)) > limit {
		return nil, fmt.Errorf("reading %s: %w (%d bytes)", path, ErrTooLarge, limit)
	}
	return buf, nil
}

func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
