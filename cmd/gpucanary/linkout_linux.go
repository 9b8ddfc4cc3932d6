//go:build !nogui

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// takeLinkOut claims standard output for the link to the tray process. The
// link moves to a fresh descriptor and descriptor 1 becomes a copy of
// stderr, so that whatever else writes to standard output (a GL driver, a
// C library, a stray print) lands in the log instead of corrupting the
// link, which would end the windows process.
func takeLinkOut() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(1), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("moving the link off standard output: %w", err)
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pointing standard output at the log: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "link"), nil
}
