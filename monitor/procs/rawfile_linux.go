package procs

import (
	"io"
	"io/fs"
	"syscall"
)

// openRaw opens a /proc file without an *os.File: no fstat, no poller
// registration, no finalizer. A refresh opens a thousand of them.
func openRaw(path string) (rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return rawFile(fd), nil
	}
}

// rawFile is an open file descriptor read with plain read(2).
type rawFile int

func (f rawFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f rawFile) Close() error { return syscall.Close(int(f)) }
