//go:build !unix && !windows

package instance

import "os"

// tryLock: no file locks here; every start gets the folder.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}
