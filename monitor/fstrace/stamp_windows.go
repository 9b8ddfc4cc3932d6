package fstrace

import (
	"io/fs"
	"os"
	"syscall"
)

// StampOf is fi's stamp (fi from os.Stat or os.Lstat): Windows gives no
// inode or change time without opening the file, so its creation time
// stands in for the change time (a file made again is a new one).
func StampOf(fi fs.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		s.CTime = d.CreationTime.Nanoseconds()
	}
	return s
}

func lookNow(path string, noFollow bool) seenNow {
	stat := os.Stat
	if noFollow {
		stat = os.Lstat
	}
	fi, err := stat(path)
	switch {
	case err == nil:
		return seenNow{stamp: StampOf(fi), ok: true}
	case absent(err):
		return seenNow{absent: true, ok: true}
	}
	return seenNow{}
}

// reduce is what of s a look compares: an Identity look, the type and
// the creation time.
func reduce(look Look, s Stamp) Stamp {
	if look&Identity == 0 {
		return s
	}
	return Stamp{Mode: s.Mode & uint32(fs.ModeType), CTime: s.CTime}
}

// isDir reports whether a stamp is a folder's.
func isDir(s Stamp) bool { return fs.FileMode(s.Mode).IsDir() }

// base is the folder looks are made from: on Windows each look takes
// its whole path (os.Stat), so a base only says which looks it holds.
type base struct{}

func openBase(string) base               { return base{} }
func (base) close()                      {}
func (base) under(string) (string, bool) { return "", false }
func (base) look(string, bool) seenNow   { return seenNow{} }
