package filefacts

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/gpucanary/gpucanary/monitor/owned"
)

// File is a regular file open for reading.
type File struct {
	*os.File
	fi fs.FileInfo
}

// Open opens the regular file at path for reading; anything but a
// regular file is an error once opened.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("opening %s: not a regular file", path)
	}
	return &File{File: f, fi: fi}, nil
}

// openOwned opens a file of the store's own folder when it passes
// owned.Check (which refuses a link, and asks nothing of the folders
// above a path on Windows).
func openOwned(path string) (*File, error) {
	if err := owned.Check(path, owned.Policy{}); err != nil {
		return nil, err
	}
	return Open(path)
}

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.fi.Size() }

// SameFile is whether the file opened is the one fi describes.
func (f *File) SameFile(fi fs.FileInfo) bool { return os.SameFile(f.fi, fi) }
