package safefs

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// pseudoFS names the kernel's pseudo file systems by their statfs magic
// (linux/magic.h). Their files pass as regular files, but what they hold is
// made by the kernel on each read: a read can block until something
// happens (procfs's kmsg, a tracefs pipe), never end, or have effects
// (pstore, efivarfs). Nothing GPU Canary reads from an environment or its
// own state belongs on one, so a symlink that leads there (version.py ->
// /proc/...) is refused as a FIFO is.
var pseudoFS = map[uint32]string{
	unix.PROC_SUPER_MAGIC:    "procfs",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.BPF_FS_MAGIC:        "bpf",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.SMACK_MAGIC:         "smackfs",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
	unix.NSFS_MAGIC:          "nsfs",
	0x62656570:               "configfs",   // CONFIGFS_MAGIC, not in x/sys/unix
	0x67596969:               "rpc_pipefs", // RPC_PIPEFS_MAGIC, not in x/sys/unix
	0x65735543:               "fusectl",    // FUSE_CTL_SUPER_MAGIC, not in x/sys/unix
}

// checkFS refuses the open file fd at path when it lives on a kernel
// pseudo file system. It asks the descriptor (fstatfs), not the path, so
// a symlink is judged by where it leads and a rename between the two
// cannot fool it. A file system that cannot be asked is not held against
// the file. dev is the file's device: every pseudo file system has an
// anonymous one (major 0), so a file on a disk's (ext4, xfs: major not 0)
// needs no question (most reads of an environment are of those).
func checkFS(path string, fd int, dev uint64) error {
	if unix.Major(dev) != 0 {
		return nil
	}
	var st unix.Statfs_t
	err := unix.Fstatfs(fd, &st)
	for err == unix.EINTR {
		err = unix.Fstatfs(fd, &st)
	}
	if err != nil {
		return nil
	}
	name, ok := pseudoFS[uint32(st.Type)]
	if !ok {
		return nil
	}
	return &fs.PathError{Op: "open", Path: path,
		Err: fmt.Errorf("%w (%s), not a file on disk: the kernel makes its contents on each read, which can block or never end, so it is not read", ErrPseudoFS, name)}
}
