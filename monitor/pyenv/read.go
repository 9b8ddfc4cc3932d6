package pyenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// smallFileLimit bounds every whole-file read (INSTALLER, version.py,
// pyvenv.cfg, direct_url.json): these are bytes long when well formed.
const smallFileLimit = 256 << 10

// readSmall reads at most limit bytes of the regular file at path; a
// longer file is an error, so a 50 MB file planted where a 100-byte one
// belongs is never read whole, and a FIFO is refused before it can block.
// The read goes to the reader's disk, as every look below does.
func (rd *Reader) readSmall(path string, limit int64) ([]byte, error) {
	return rd.ReadFile(path, limit)
}

// readSiteFile is readSmall for a small file in a site-packages folder
// that an install writes once (INSTALLER, version.py, WHEEL): its bytes
// are a file fact (filefacts) while its stamp stays the same, so that the
// next read of the environment stats it instead of opening and reading
// it. A file that cannot be stat'ed, is not a regular file or is larger
// than siteFileFact is read as readSmall reads it, and says why not.
func (rd *Reader) readSiteFile(path string, limit int64) ([]byte, error) {
	fi, err := rd.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > min(limit, siteFileFact) {
		return rd.readSmall(path, limit)
	}
	st := filefacts.Of(fi)
	if v, ok := rd.fact(siteFileContent, path, st); ok {
		return []byte(v), nil
	}
	data, err := rd.readSmall(path, limit)
	if err == nil && int64(len(data)) == fi.Size() {
		rd.keep(siteFileContent, path, st, string(data))
	}
	return data, err
}

// siteFileFact bounds the files readSiteFile keeps the bytes of, and
// siteFileContent is the kind of that fact.
const (
	siteFileFact    = 4 << 10
	siteFileContent = "site:content"
)

// readMetadataFile parses the header of a METADATA or PKG-INFO file.
func (rd *Reader) readMetadataFile(path string) (pyspec.Metadata, error) {
	f, err := rd.Open(path)
	if err != nil {
		return pyspec.Metadata{}, err
	}
	defer f.Close()
	m, err := pyspec.ParseMetadata(f)
	if err != nil {
		return m, fmt.Errorf("parse %s: %w", path, err)
	}
	return m, nil
}

// dirIndex is one directory listing, looked up case-insensitively: a
// Windows environment read from Linux has "Lib" where POSIX has "lib", and
// Windows itself does not care.
type dirIndex struct {
	rd      *Reader // the reader that listed it; isDir's looks go to its disk too
	entries []os.DirEntry
	byLower map[string]os.DirEntry
}

// listDir lists the folder at path on the reader's disk.
func (rd *Reader) listDir(path string) (*dirIndex, error) {
	ents, err := rd.ReadDir(path)
	if err != nil {
		return nil, err
	}
	ix := &dirIndex{rd: rd, entries: ents, byLower: make(map[string]os.DirEntry, len(ents))}
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
		fi, err := ix.rd.Stat(parent + string(os.PathSeparator) + actual)
		return actual, err == nil && fi.IsDir()
	}
	return actual, false
}

// problemFor describes a failed read of path as a Problem. Something
// other than what was expected there (a FIFO where a file or a folder
// belongs) is named as what it is, never as missing.
func (rd *Reader) problemFor(path, what string, err error) Problem {
	kind := ProblemUnreadable
	if errors.Is(err, safefs.ErrTooLarge) {
		kind = ProblemTruncated
	}
	msg := fmt.Sprintf("cannot read %s: %v", what, err)
	if k := rd.fileKind(path); k != "" && (errors.Is(err, safefs.ErrNotRegular) || k != "a folder") {
		want := "a folder"
		if errors.Is(err, safefs.ErrNotRegular) {
			want = "a regular file"
		}
		msg = fmt.Sprintf("%s is %s, not %s: GPU Canary did not read it", path, k, want)
	}
	return Problem{Kind: kind, Path: path, Message: msg}
}

// fileKind names what is at path when it is not a regular file: "a
// FIFO", "a socket", "a device", "a folder", "a special file"; "" for a
// regular file or nothing at all. It follows links, as opening does.
func (rd *Reader) fileKind(path string) string {
	fi, err := rd.Stat(path)
	if err != nil {
		return ""
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "a special file"
}

// exists reports whether path names anything on the reader's disk.
func (rd *Reader) exists(path string) bool {
	_, err := rd.Lstat(path)
	return err == nil
}
