package guard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// fileInfo is what the guard keeps of a file it read: its mode.
type fileInfo struct{ mode fs.FileMode }

// checkParents refuses a folder between root and path that is a
// reparse point (a symbolic link or a junction): Windows has no openat,
// so each folder is looked at by its attributes before the file is.
func checkParents(root, path string) (string, error) {
	rel, err := relInside(root, path)
	if err != nil {
		return "", err
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := root
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		attrs, err := windows.GetFileAttributes(windows.StringToUTF16Ptr(cur))
		if err != nil {
			return "", fmt.Errorf("looking at %s: %w", cur, &fs.PathError{Op: "stat", Path: cur, Err: err})
		}
		if attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
			target, _ := os.Readlink(cur)
			return "", &UnsafeFileError{Path: path, Why: linkWhy("the folder "+cur, target)}
		}
	}
	return filepath.Join(root, rel), nil
}

// openNoFollow opens path with FILE_FLAG_OPEN_REPARSE_POINT, which opens
// a link itself rather than what it points to, and refuses it by its
// attributes when it is one (or a file with other names).
func openNoFollow(path string, access uint32) (*os.File, *fileInfo, error) {
	h, err := windows.CreateFile(windows.StringToUTF16Ptr(path), access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		windows.CloseHandle(h)
		return nil, nil, fmt.Errorf("looking at %s: %w", path, err)
	}
	switch {
	case d.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		windows.CloseHandle(h)
		target, _ := os.Readlink(path)
		return nil, nil, &UnsafeFileError{Path: path, Why: linkWhy("it", target)}
	case d.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		windows.CloseHandle(h)
		return nil, nil, &UnsafeFileError{Path: path, Why: "it is a folder, not a plain file"}
	case d.NumberOfLinks > 1:
		windows.CloseHandle(h)
		return nil, nil, &UnsafeFileError{Path: path, Why: fmt.Sprintf("it has %d names (hard links), so it may be a file outside the environment", d.NumberOfLinks)}
	}
	mode := fs.FileMode(0o666)
	if d.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
		mode = 0o444
	}
	return os.NewFile(uintptr(h), path), &fileInfo{mode: mode}, nil
}

// readFile reads the guard file at path under root, at most limit bytes,
// without following a link; a missing file is fs.ErrNotExist (wrapped).
func readFile(root, path string, limit int64) ([]byte, *fileInfo, error) {
	p, err := checkParents(root, path)
	if err != nil {
		return nil, nil, err
	}
	f, info, err := openNoFollow(p, windows.GENERIC_READ)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	b, err := readLimited(f, path, limit)
	return b, info, err
}

// lookNoFollow is nil when nothing is at path, an error when what is
// there is no plain file of its own.
func lookNoFollow(path string) (*fileInfo, error) {
	f, info, err := openNoFollow(path, windows.FILE_READ_ATTRIBUTES)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	return info, nil
}

// writeFile puts data at path under root: a new file when there is none
// (CREATE_NEW: never over anything), else a new file moved over the
// name, which replaces what is there rather than writing to it.
func writeFile(root, path string, data []byte, mode fs.FileMode) error {
	p, err := checkParents(root, path)
	if err != nil {
		return err
	}
	cur, err := lookNoFollow(p)
	if err != nil {
		return err
	}
	if cur == nil {
		return create(p, data, mode)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+"."+hex.EncodeToString(rnd[:])+".tmp")
	if err := create(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

func create(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}

// removeFile removes the guard file at path under root; a link there is
// refused, not removed, and a missing file is no error.
func removeFile(root, path string) error {
	p, err := checkParents(root, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	cur, err := lookNoFollow(p)
	if err != nil || cur == nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}
