//go:build !windows

package fixjournal

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this PID exists. A PID
// reused since makes a dead recorder look alive: the journal then says
// "still running" rather than "interrupted", the cautious side.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
