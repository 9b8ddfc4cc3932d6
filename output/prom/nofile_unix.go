//go:build unix

package prom

import "syscall"

// fileLimit is the number of descriptors this process may open (its
// soft RLIMIT_NOFILE), 0 when not known or unlimited.
func fileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur >= 1<<40 {
		return 0
	}
	return uint64(r.Cur)
}
