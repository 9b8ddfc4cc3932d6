//go:build !windows

package filefacts

import (
	"os"
	"syscall"
)

func sysStamp(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), st.Ctim.Nano() // Dev is int32 on some systems
	}
	return 0, 0, 0
}
