//go:build !windows

package fatbin

import (
	"os"
	"syscall"
)

func stampOf(fi os.FileInfo) stamp {
	s := stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Dev, s.Ino = uint64(st.Dev), uint64(st.Ino)
	}
	return s
}
