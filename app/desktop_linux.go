//go:build linux

package app

import (
	"errors"
	"fmt"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// openFolder shows path in the file manager.
func openFolder(path string) error {
	return exec.Command("xdg-open", path).Start()
}

// terminate sends SIGTERM to the process with this PID that started at
// start, and to no other: a pidfd pins the process while its start time is
// checked, so a PID reused since the table was drawn is refused, not
// signalled. Kernels before 5.3 have no pidfd; there the check and the
// signal are a moment apart.
func terminate(pid int, start time.Time) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil && !errors.Is(err, unix.ENOSYS) {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("PID %d has already exited", pid)
		}
		return fmt.Errorf("opening PID %d: %w", pid, err)
	}
	if err == nil {
		defer unix.Close(fd)
	}
	now, serr := procs.StartTimeOf(pid)
	if serr != nil {
		return fmt.Errorf("PID %d has already exited", pid)
	}
	if !now.Equal(start) {
		return fmt.Errorf("PID %d has exited; another process (started %s) has its number now, and was left alone", pid, now.Format(time.TimeOnly))
	}
	if err != nil { // no pidfd on this kernel
		return unix.Kill(pid, unix.SIGTERM)
	}
	return unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0)
}
