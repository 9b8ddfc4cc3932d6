//go:build unix

package owned

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// euid is the user the checks trust; a variable so that a test can ask
// as another.
var euid = os.Geteuid

func checkLeaf(path string, p Policy) error {
	fi, st, err := lstat(path)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return untrusted(path, fi, st, "it is a link, and a link is never used as a store")
	case int(st.Uid) != euid() && !(p.Admin && st.Uid == 0):
		return untrusted(path, fi, st, "it belongs to another user")
	case fi.Mode().Perm()&0o022 != 0:
		return untrusted(path, fi, st, "other users can write it")
	}
	return nil
}

func checkParent(dir string) error {
	fi, st, err := lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case int(st.Uid) != euid() && st.Uid != 0:
		return untrusted(dir, fi, st, "a folder above it belongs to another user, who can replace what is in it")
	case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return untrusted(dir, fi, st, "other users can write a folder above it and so replace what is in it")
	}
	return nil
}

func lstat(path string) (fs.FileInfo, *syscall.Stat_t, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checking who owns %s: %w", path, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil, fmt.Errorf("checking who owns %s: the system gave no owner", path)
	}
	return fi, st, nil
}

func untrusted(path string, fi fs.FileInfo, st *syscall.Stat_t, why string) *Untrusted {
	return untrustedMode(path, st.Uid, fi.Mode(), why)
}

func untrustedMode(path string, uid uint32, mode fs.FileMode, why string) *Untrusted {
	owner := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	return &Untrusted{Path: path, Owner: owner, Mode: mode.String(), Why: why}
}

// Opened is Check's rule for a regular file already opened (without
// following a link) from a folder Check passed, as fstat described it
// in st: the folders above it were checked once, for the folder, and a
// store that reads many files asks only this of each, from the stat it
// made anyway.
func Opened(path string, st *syscall.Stat_t, p Policy) error {
	perm := fs.FileMode(st.Mode & 0o777)
	switch {
	case int(st.Uid) != euid() && !(p.Admin && st.Uid == 0):
		return untrustedMode(path, st.Uid, perm, "it belongs to another user")
	case perm&0o022 != 0:
		return untrustedMode(path, st.Uid, perm, "other users can write it")
	}
	return nil
}
