package fstrace

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// StampOf is fi's stamp (fi from os.Stat or os.Lstat).
func StampOf(fi fs.FileInfo) Stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	}
	return Stamp{
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, Mode: st.Mode,
		MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(),
	}
}

// lookNow stats path as look says, with the system call itself: a
// Checker looks at thousands of paths, and an os.FileInfo for each is
// garbage.
func lookNow(path string, noFollow bool) seenNow { return statAt(unix.AT_FDCWD, path, noFollow) }

// statAt stats path from the folder dir (an absolute path: from the
// root), following a link at its end unless noFollow.
func statAt(dir int, path string, noFollow bool) seenNow {
	flags := 0
	if noFollow {
		flags = unix.AT_SYMLINK_NOFOLLOW
	}
	var st unix.Stat_t
	var err error
	for {
		if err = unix.Fstatat(dir, path, &st, flags); err != unix.EINTR {
			break
		}
	}
	switch {
	case err == nil:
		return seenNow{stamp: Stamp{
			Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mode: st.Mode,
			MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(),
		}, ok: true}
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

// isDir reports whether a stamp is a folder's.
func isDir(s Stamp) bool { return s.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// base is a folder opened to look at the paths under it (fstatat), which
// spares the kernel walking the folders above it again for each: an
// environment's looks are mostly a dozen folders deep.
type base struct {
	dir string
	fd  int
}

func openBase(dir string) base {
	if dir == "" {
		return base{fd: -1}
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return base{fd: -1} // the looks go the long way, and say what is there
	}
	return base{dir: dir, fd: fd}
}

func (b base) close() {
	if b.fd >= 0 {
		unix.Close(b.fd)
	}
}

// under is path relative to the base, when it is inside it.
func (b base) under(path string) (string, bool) {
	if b.fd < 0 || !under(b.dir, path) {
		return "", false
	}
	return path[len(b.dir)+1:], true
}

// look stats rel from the base folder.
func (b base) look(rel string, noFollow bool) seenNow { return statAt(b.fd, rel, noFollow) }
