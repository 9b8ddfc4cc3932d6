package pyenv

import (
	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
)

// Disk is what a read looks at (monitor/pyenv/disk): the reader's files
// take the disk only through it.
type Disk = disk.Disk

// RealDisk is this machine's disk and this process's variables, read
// without letting a FIFO or a device block.
var RealDisk Disk = disk.Real{}

// Reader reads Python environments from its Disk. What it learns of
// files that an install writes once (a RECORD's libraries and sizes, a
// small site file's bytes, a library's CUDA kernels) is kept in the
// stores its caller gives it, by the file's stamp, so that a read again
// stats those files instead of reading them: the caller owns the stores
// (their files, their Flush), and a Reader without them reads
// everything every time. A Reader is safe for concurrent use when its
// Disk and stores are (the real disk and the stores are).
type Reader struct {
	// Disk is where the read looks; nil is RealDisk.
	Disk
	// Facts keeps what was learned of a file by its stamp; nil keeps
	// nothing.
	Facts *filefacts.Store
	// Kernels reads a CUDA library's kernels, again only when the
	// library changes; nil reads them every time.
	Kernels *fatbin.Cache
}

// realReader is the reader of the package's functions that read without
// a Reader (Inspect, AppOf, ExternallyManaged): the real disk, nothing
// kept.
var realReader = &Reader{Disk: RealDisk}

// ready is r with its Disk defaulted, for a read to start from.
func (r *Reader) ready() *Reader {
	if r == nil {
		return realReader
	}
	if r.Disk == nil {
		c := *r
		c.Disk = RealDisk
		return &c
	}
	return r
}

// fact is the fact of kind about the file at path as of st, when the
// reader keeps facts and has one.
func (r *Reader) fact(kind, path string, st filefacts.Stamp) (string, bool) {
	if r.Facts == nil {
		return "", false
	}
	return r.Facts.Get(kind, path, st)
}

// keep keeps value as the fact of kind about the file at path as of st,
// when the reader keeps facts.
func (r *Reader) keep(kind, path string, st filefacts.Stamp, value string) {
	if r.Facts != nil {
		r.Facts.Put(kind, path, st, value)
	}
}

// kernels reads the CUDA kernels of the library at path, from the
// reader's kernel cache when it has one.
func (r *Reader) kernels(path string) (fatbin.Kernels, error) {
	fi, err := r.Stat(path)
	if err != nil {
		return fatbin.Kernels{}, err
	}
	if r.Kernels == nil {
		return (&fatbin.Cache{}).ReadStated(path, fi)
	}
	return r.Kernels.ReadStated(path, fi)
}
