//go:build unix

package instance

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock on f without waiting; false when
// another open file holds it (another process, or this one through
// another open).
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// openLockFile opens (creating 0600) the lock file at p for writing
// without following a symlink (O_NOFOLLOW) or waiting on a FIFO
// (O_NONBLOCK), and refuses anything that is not a regular file.
func openLockFile(p string) (*os.File, error) {
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK
	fd, err := unix.Open(p, flags, 0o600)
	for err == unix.EINTR {
		fd, err = unix.Open(p, flags, 0o600)
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EISDIR) {
		return nil, ErrNotLockFile
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, ErrNotLockFile
	}
	// Back to blocking: flock and writes on a regular file ignore it, but
	// os.File should see the descriptor as it opened it.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}
