//go:build !unix && !windows

package instance

import "os"

// tryLock: no file locks here; every start gets the folder.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}

// openLockFile opens (creating) the lock file at p, refusing a symlink or
// anything else but a regular file already there.
func openLockFile(p string) (*os.File, error) {
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, ErrNotLockFile
	}
	return os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
}
