package filefacts

import (
	"io/fs"
	"syscall"
)

// Of is fi's stamp (fi from os.Stat or os.Lstat), with the change time
// the kernel keeps and nobody can set back.
func Of(fi fs.FileInfo) Stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	}
	return Stamp{Dev: st.Dev, Ino: st.Ino, Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano()}
}
