package fstrace

import (
	"io/fs"
	"syscall"
)

// StampOf is fi's stamp (fi from os.Stat or os.Lstat).
func StampOf(fi fs.FileInfo) Stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	}
	return stampOfStat(st)
}

func stampOfStat(st *syscall.Stat_t) Stamp {
	return Stamp{
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, Mode: st.Mode,
		MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(),
	}
}

// lookNow stats path as look says, with the system call itself: a
// Checker looks at thousands of paths, and an os.FileInfo for each is
// garbage.
func lookNow(path string, noFollow bool) seenNow {
	var st syscall.Stat_t
	var err error
	for {
		if noFollow {
			err = syscall.Lstat(path, &st)
		} else {
			err = syscall.Stat(path, &st)
		}
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err == nil:
		return seenNow{stamp: stampOfStat(&st), ok: true}
	case absent(err):
		return seenNow{absent: true, ok: true}
	}
	return seenNow{}
}

// reduce is what of s a look compares: an Identity look, the device,
// inode and type, and a link's change time.
func reduce(look Look, s Stamp) Stamp {
	if look&Identity == 0 {
		return s
	}
	id := Stamp{Dev: s.Dev, Ino: s.Ino, Mode: s.Mode & syscall.S_IFMT}
	if id.Mode == syscall.S_IFLNK {
		id.CTime = s.CTime
	}
	return id
}
