package procs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// initPIDNamespace is the initial PID namespace's link text: the kernel
// gives it a fixed inode, PROC_PID_INIT_INO (include/linux/proc_ns.h).
const initPIDNamespace = "pid:[4026531836]"

// HostPIDs answers whether a PID the driver lists runs here, read from
// the proc mount at root ("" = /proc), or nil when that proc mount is not
// the host's PID namespace (a container without hostPID): NVML's PIDs
// are the host's, and there a PID missing from it says nothing. A PID
// whose folder cannot be stat'ed for another reason than its absence is
// taken to be running.
func HostPIDs(root string) func(pid int) bool {
	if root == "" {
		root = "/proc"
	}
	if ns, err := os.Readlink(filepath.Join(root, "self", "ns", "pid")); err != nil || ns != initPIDNamespace {
		return nil
	}
	return func(pid int) bool {
		_, err := os.Stat(filepath.Join(root, strconv.Itoa(pid)))
		return !errors.Is(err, fs.ErrNotExist)
	}
}
