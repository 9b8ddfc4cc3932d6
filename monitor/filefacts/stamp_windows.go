package filefacts

import (
	"io/fs"
	"syscall"
)

// Of is fi's stamp (fi from os.Stat or os.Lstat): Windows gives no inode
// or change time without opening the file, so its creation time stands
// in for the change time (a file made again is a new one).
func Of(fi fs.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		s.CTime = d.CreationTime.Nanoseconds()
	}
	return s
}
