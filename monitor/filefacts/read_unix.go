//go:build !windows

package filefacts

import (
	"io/fs"
	"syscall"
)

// readFile reads the regular file at path, of at most limit bytes, on
// its raw descriptor: a run reads one small file per environment, and an
// *os.File would add the poller's flags and registration to each.
func readFile(path string, limit int64) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > limit {
		return nil, errMalformed
	}
	buf := make([]byte, st.Size)
	for n := 0; n < len(buf); {
		m, err := syscall.Read(fd, buf[n:])
		switch {
		case err == syscall.EINTR || err == syscall.EAGAIN:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case m == 0:
			return buf[:n], nil
		}
		n += m
	}
	return buf, nil
}
