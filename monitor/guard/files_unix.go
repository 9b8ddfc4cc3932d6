//go:build unix

package guard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openParent opens the folder that holds path, walking down from root
// one name at a time with O_NOFOLLOW: a folder on the way that is a link
// is refused, whatever it points to, and no one can swap one in between
// the look and the use, since each step opens from the folder before it.
// root itself is opened as named (the user named it). It returns the
// folder's descriptor, which the caller closes, and the file's name in it.
func openParent(root, path string) (int, string, error) {
	rel, err := relInside(root, path)
	if err != nil {
		return -1, "", err
	}
	parts := strings.Split(rel, string(filepath.Separator))
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("opening %s: %w", root, err)
	}
	cur := root
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			var st unix.Stat_t
			if unix.Fstatat(fd, p, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				target, _ := os.Readlink(cur)
				err = &UnsafeFileError{Path: path, Why: linkWhy("the folder "+cur, target)}
			} else {
				err = fmt.Errorf("opening %s: %w", cur, &fs.PathError{Op: "open", Path: cur, Err: err})
			}
			unix.Close(fd)
			return -1, "", err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, parts[len(parts)-1], nil
}

// fileInfo is what the guard keeps of a file it read: its mode and
// owner, which the file replacing it gets.
type fileInfo struct {
	mode     fs.FileMode
	uid, gid int
}

// lstatAt checks the name in the folder dfd: nil info when there is
// nothing there, an UnsafeFileError when it is a link, not a plain file,
// or a file with other names (a hard link may be a file outside the
// environment).
func lstatAt(dfd int, name, path string) (*fileInfo, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("looking at %s: %w", path, err)
	}
	return checkStat(&st, path)
}

func checkStat(st *unix.Stat_t, path string) (*fileInfo, error) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK:
		target, _ := os.Readlink(path)
		return nil, &UnsafeFileError{Path: path, Why: linkWhy("it", target)}
	default:
		return nil, &UnsafeFileError{Path: path, Why: "it is not a plain file"}
	}
	if st.Nlink > 1 {
		return nil, &UnsafeFileError{Path: path, Why: fmt.Sprintf("it has %d names (hard links), so it may be a file outside the environment", st.Nlink)}
	}
	return &fileInfo{mode: fs.FileMode(st.Mode & 0o777), uid: int(st.Uid), gid: int(st.Gid)}, nil
}

// readFile reads the guard file at path under root, at most limit bytes,
// without following a link; a missing file is fs.ErrNotExist (wrapped)
// and a nil info.
func readFile(root, path string, limit int64) ([]byte, *fileInfo, error) {
	dfd, name, err := openParent(root, path)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		target, _ := os.Readlink(path)
		return nil, nil, &UnsafeFileError{Path: path, Why: linkWhy("it", target)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	info, err := checkStat(&st, path)
	if err != nil {
		return nil, nil, err
	}
	b, err := readLimited(f, path, limit)
	return b, info, err
}

// writeFile puts data at path under root: a new file when there is none
// (never over one that appeared meanwhile), else a new file renamed over
// the name, so that what was there, whatever it is, is not written to.
// The new file takes old's mode and owner (a root guard leaves a user's
// pip.conf theirs) and mode; a created one, as root, the owner of the
// folder it is made in.
func writeFile(root, path string, data []byte, mode fs.FileMode) error {
	dfd, name, err := openParent(root, path)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	cur, err := lstatAt(dfd, name, path)
	if err != nil {
		return err
	}
	owner := cur
	if owner == nil {
		var st unix.Stat_t
		if err := unix.Fstat(dfd, &st); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		owner = &fileInfo{uid: int(st.Uid), gid: int(st.Gid)}
	}
	if cur == nil {
		return createAt(dfd, name, path, data, mode, owner)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := "." + name + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	if err := createAt(dfd, tmp, path, data, mode, owner); err != nil {
		return err
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

// createAt makes name in dfd with data, O_EXCL and O_NOFOLLOW: never over
// anything, link or file.
func createAt(dfd int, name, path string, data []byte, mode fs.FileMode, owner *fileInfo) error {
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, &fs.PathError{Op: "create", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	_, werr := f.Write(data)
	if werr == nil && os.Geteuid() == 0 && owner != nil {
		werr = f.Chown(owner.uid, owner.gid)
	}
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		unix.Unlinkat(dfd, name, 0)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}

// removeFile removes the guard file at path under root; a link there is
// refused, not removed, and a missing file is no error.
func removeFile(root, path string) error {
	dfd, name, err := openParent(root, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	cur, err := lstatAt(dfd, name, path)
	if err != nil || cur == nil {
		return err
	}
	if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}
