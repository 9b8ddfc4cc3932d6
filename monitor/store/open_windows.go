//go:build windows

package store

import (
	"errors"
	"io/fs"
	"os"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// openAppend opens the log at p for appending, created 0600; a link, or
// anything but a regular file, is refused with safefs.ErrNotRegular.
func openAppend(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return nil, safefs.ErrNotRegular
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return regular(f)
}
