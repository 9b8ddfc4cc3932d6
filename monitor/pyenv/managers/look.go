package managers

import (
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
)

// The places and project rules read a tool's own small settings files
// (config.toml, .condarc, pyproject.toml, library.json) and look whether
// a folder is there, on this machine's disk, as the reader's real disk
// does: a file read whole stops at smallFileLimit and a FIFO is refused.
// They are the search's looks, not an environment's read, so they go to
// the real disk directly and keep nothing.
var realDisk disk.Disk = disk.Real{}

// smallFileLimit bounds every settings file read whole: these are bytes
// long when well formed (the reader's own bound for its small files).
const smallFileLimit = 256 << 10

// readSmall reads at most limit bytes of the regular file at path; a
// longer file is an error, so a 50 MB file planted where a 100-byte one
// belongs is never read whole.
func readSmall(path string, limit int64) ([]byte, error) { return realDisk.ReadFile(path, limit) }

// isDir reports whether path is a folder (or a link to one).
func isDir(path string) bool {
	fi, err := realDisk.Stat(path)
	return err == nil && fi.IsDir()
}

// exists reports whether path names anything.
func exists(path string) bool {
	_, err := realDisk.Lstat(path)
	return err == nil
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := realDisk.Stat(a)
	fb, errB := realDisk.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
