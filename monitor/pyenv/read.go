package pyenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// smallFileLimit bounds every whole-file read (INSTALLER, version.py,
// pyvenv.cfg, direct_url.json): these are bytes long when well formed.
const smallFileLimit = 256 << 10

// errTooLarge is returned by readSmall when a file exceeds its limit.
var errTooLarge = errors.New("file larger than the read limit")

// errNotRegular refuses a read of something that is not a regular file
// (a FIFO or a device would block the read).
var errNotRegular = errors.New("not a regular file")

// readSmall reads at most limit bytes of path; a longer file is an error, so
// a 50 MB file planted where a 100-byte one belongs is never read whole.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w (%d bytes)", path, errTooLarge, limit)
	}
	return data, nil
}

// readMetadataFile parses the header of a METADATA or PKG-INFO file.
func readMetadataFile(path string) (Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metadata{}, err
	}
	defer f.Close()
	m, err := ParseMetadata(f)
	if err != nil {
		return m, fmt.Errorf("parse %s: %w", path, err)
	}
	return m, nil
}

// dirIndex is one directory listing, looked up case-insensitively: a
// Windows environment read from Linux has "Lib" where POSIX has "lib", and
// Windows itself does not care.
type dirIndex struct {
	entries []os.DirEntry
	byLower map[string]os.DirEntry
}

func listDir(path string) (*dirIndex, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	ix := &dirIndex{entries: ents, byLower: make(map[string]os.DirEntry, len(ents))}
	for _, e := range ents {
		l := strings.ToLower(e.Name())
		if _, dup := ix.byLower[l]; !dup {
			ix.byLower[l] = e
		}
	}
	return ix, nil
}

// get returns the actual name of an entry matched case-insensitively.
func (ix *dirIndex) get(name string) (string, bool) {
	if ix == nil {
		return "", false
	}
	e, ok := ix.byLower[strings.ToLower(name)]
	if !ok {
		return "", false
	}
	return e.Name(), true
}

// isDir reports whether the entry is a directory, following a symlink
// (lib64 -> lib in POSIX venvs) only when the entry is one.
func (ix *dirIndex) isDir(parent, name string) (string, bool) {
	actual, ok := ix.get(name)
	if !ok {
		return "", false
	}
	e := ix.byLower[strings.ToLower(name)]
	if e.IsDir() {
		return actual, true
	}
	if e.Type()&os.ModeSymlink != 0 {
		fi, err := os.Stat(parent + string(os.PathSeparator) + actual)
		return actual, err == nil && fi.IsDir()
	}
	return actual, false
}

// problemFor describes a failed read of path as a Problem.
func problemFor(path, what string, err error) Problem {
	kind := ProblemUnreadable
	if errors.Is(err, errTooLarge) {
		kind = ProblemTruncated
	}
	return Problem{Kind: kind, Path: path, Message: fmt.Sprintf("cannot read %s: %v", what, err)}
}
