//go:build !windows

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// openAppend opens the log at p for appending, created 0600, without
// following a link (O_NOFOLLOW) or waiting on a FIFO (O_NONBLOCK: with no
// reader, opening one for writing fails at once); anything but a regular
// file is refused with safefs.ErrNotRegular.
func openAppend(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) {
		return nil, fmt.Errorf("%w: %w", safefs.ErrNotRegular, err)
	}
	if err != nil {
		return nil, err
	}
	return regular(f)
}
