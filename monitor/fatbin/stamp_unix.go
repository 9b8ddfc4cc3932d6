//go:build !windows

package fatbin

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// openLib opens the library at path, stat'ed as fi, for reading on its
// raw descriptor (an *os.File would ask the poller to take it, and the
// flags, on every library of every environment), and checks that what
// was opened is the regular file that was stat'ed. O_NONBLOCK keeps a
// FIFO put there since from blocking the open.
func openLib(path string, fi os.FileInfo) (io.ReaderAt, int64, func(), error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, 0, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	closeFD := func() { syscall.Close(fd) }
	var st syscall.Stat_t
	err = syscall.Fstat(fd, &st)
	for err == syscall.EINTR {
		err = syscall.Fstat(fd, &st)
	}
	if err != nil {
		closeFD()
		return nil, 0, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	want := stampOf(fi)
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || uint64(st.Dev) != want.Dev || uint64(st.Ino) != want.Ino { // Dev is int32 on some systems
		closeFD()
		return nil, 0, nil, fmt.Errorf("%s changed while it was opened", path)
	}
	return fdReader(fd), st.Size, closeFD, nil
}

// fdReader reads a descriptor at offsets (pread).
type fdReader int

func (r fdReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(int(r), p[n:], off+int64(n))
		if err == syscall.EINTR {
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
