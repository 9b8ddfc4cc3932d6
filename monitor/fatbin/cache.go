package fatbin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpucanary/gpucanary/monitor/cachefiles"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// noFatbin is the kind of fact Facts keeps: the library carries no fat
// binary (most of an environment's libraries), or what it holds is no
// library GPU Canary reads (the fact is then why, as Read said it).
const noFatbin = "fatbin:none"

// cacheLimit bounds the entries a cache holds and loads, and
// cacheFileLimit the size of the file it loads.
const (
	cacheLimit     = 50000
	cacheFileLimit = 32 << 20
)

// stamp is what says a file is unchanged (filefacts.Stamp): its device
// and inode (0 on Windows, where os.Stat gives none), size, modification
// and change times.
type stamp struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
	CTime int64  `json:"ctime_ns,omitempty"`
}

// stampOf is fi's stamp (filefacts': on Windows, where os.Stat gives no
// file index without opening the file, size and modification time stand
// for it).
func stampOf(fi os.FileInfo) stamp { return stamp(filefacts.Of(fi)) }

// result is one file's answer as cached.
type result struct {
	stamp
	SASS       []string `json:"sass,omitempty"`
	PTX        []string `json:"ptx,omitempty"`
	Runtime    string   `json:"runtime,omitempty"`
	Containers int      `json:"containers,omitempty"`
	NoFatbin   bool     `json:"no_fatbin,omitempty"`
	Err        string   `json:"error,omitempty"`
	// Used is when the answer was last asked for (Unix seconds, updated
	// at most daily): a file unused for cacheUnused is dropped at Flush,
	// so the paths of deleted environments do not pile up.
	Used int64 `json:"used"`
}

// cacheUnused is how long an answer nobody asks for is kept.
const cacheUnused = 30 * 24 * time.Hour

// Cache remembers what Read said of each file by path, while the file's
// stamp stays the same, in memory and, with SetFile, on disk.
type Cache struct {
	// Facts, when set, keeps which libraries carry no fat binary, so
	// that a run after this one stats them instead of reading their
	// headers again: those answers are most of an environment's and are
	// not in the JSON file (SetFile), which keeps the CUDA ones.
	Facts *filefacts.Store

	mu     sync.Mutex
	m      map[string]result
	file   string
	loaded bool
	dirty  bool
	reads  int // files read, not answered from the cache (for tests)
}

// SetFile makes the cache last across runs in path (loaded on first
// use, written by Flush). A missing, unreadable or malformed file is an
// empty cache, never an error.
func (c *Cache) SetFile(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.file, c.loaded = path, false
}

// Reads is how many files the cache has read rather than answered.
func (c *Cache) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// ReadFile is Read of the file at path, from the cache while the file is
// unchanged. Only regular files are read: a FIFO or device is an error.
func (c *Cache) ReadFile(path string) (Kernels, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Kernels{}, err
	}
	if !fi.Mode().IsRegular() {
		return Kernels{}, fmt.Errorf("%s is not a regular file", path)
	}
	st := stampOf(fi)
	now := time.Now().Unix()
	c.mu.Lock()
	c.load()
	r, ok := c.m[path]
	if ok && r.stamp == st {
		if now-r.Used > 24*3600 {
			r.Used = now
			c.m[path] = r
			c.dirty = c.dirty || r.persisted()
		}
		c.mu.Unlock()
		return r.kernels()
	}
	c.mu.Unlock()
	if c.Facts != nil {
		// Facts holds these answers (and lets them go once used): not
		// kept twice in memory.
		if why, ok := c.Facts.Get(noFatbin, path, filefacts.Stamp(st)); ok {
			return result{NoFatbin: why == "", Err: why}.kernels()
		}
	}
	k, err := readPath(path, fi)
	r = result{stamp: st, Used: now, Runtime: k.Runtime, Containers: k.Containers, SASS: archNames(k.SASS), PTX: archNames(k.PTX)}
	inFacts := false
	switch {
	case errors.Is(err, ErrNoFatbin):
		r.NoFatbin = true
		if c.Facts != nil {
			c.Facts.Put(noFatbin, path, filefacts.Stamp(st), "")
			inFacts = true
		}
	case err != nil:
		r = result{stamp: st, Used: now, Err: err.Error()}
		var nl notLibrary
		if c.Facts != nil && errors.As(err, &nl) && !errors.Is(err, ErrMalformed) && !errors.As(err, new(syscall.Errno)) {
			// what the file holds, not how reading it went
			c.Facts.Put(noFatbin, path, filefacts.Stamp(st), err.Error())
			inFacts = true
		}
	}
	c.mu.Lock()
	c.reads++
	if inFacts {
		if ok {
			delete(c.m, path) // an older answer, CUDA's perhaps: written without it
			c.dirty = true
		}
	} else if len(c.m) < cacheLimit || ok {
		c.m[path] = r
		c.dirty = c.dirty || r.persisted() || ok
	}
	c.mu.Unlock()
	return k, err
}

// readPath opens and reads one library, checking that what was opened
// is the regular file that was stat'ed.
func readPath(path string, fi os.FileInfo) (Kernels, error) {
	r, size, closeLib, err := openLib(path, fi)
	if err != nil {
		return Kernels{}, err
	}
	defer closeLib()
	k, err := Read(newHeadReader(r, size), size)
	if err != nil && !errors.Is(err, ErrNoFatbin) {
		err = notLibrary{err}
	}
	return k, err
}

// notLibrary is Read's error on a file that was opened: what it holds
// (or a read of it that failed, a syscall.Errno below it), as against
// the file not being there or not opening.
type notLibrary struct{ err error }

func (e notLibrary) Error() string { return e.err.Error() }
func (e notLibrary) Unwrap() error { return e.err }

// headSize is how much of a library readPath reads at once first: the
// magic number, the ELF or PE header and, for a small file, all of it,
// in one read where they were three or more.
const headSize = 4 << 10

// headReader answers reads within a file's first headSize bytes from
// one read of them, and the others from the file.
type headReader struct {
	r    io.ReaderAt
	head []byte
	all  bool // head is the whole file
}

func newHeadReader(r io.ReaderAt, size int64) io.ReaderAt {
	buf := make([]byte, min(max(size, 0), headSize))
	n, err := r.ReadAt(buf, 0)
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return &headReader{r: r, head: buf[:n], all: err != nil || int64(n) == size}
	}
	return r
}

func (h *headReader) ReadAt(p []byte, off int64) (int, error) {
	switch {
	case off < 0:
	case off+int64(len(p)) <= int64(len(h.head)):
		return copy(p, h.head[off:]), nil
	case h.all && off >= int64(len(h.head)):
		return 0, io.EOF
	case h.all:
		return copy(p, h.head[off:]), io.EOF
	}
	return h.r.ReadAt(p, off)
}

func archNames(as []Arch) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.number()
	}
	return out
}

// persisted is whether the answer is kept on disk: a CUDA library's,
// or why its fat binary could not be read.
func (r result) persisted() bool {
	return !r.NoFatbin && (r.Err == "" || strings.HasPrefix(r.Err, ErrMalformed.Error()))
}

func (r result) kernels() (Kernels, error) {
	if r.Err != "" {
		return Kernels{}, errors.New(r.Err)
	}
	k := Kernels{Runtime: r.Runtime, Containers: r.Containers}
	for _, s := range r.SASS {
		if a, ok := ParseArch(s); ok {
			k.SASS = append(k.SASS, a)
		}
	}
	for _, s := range r.PTX {
		if a, ok := ParseArch(s); ok {
			k.PTX = append(k.PTX, a)
		}
	}
	if r.NoFatbin {
		return k, ErrNoFatbin
	}
	return k, nil
}

// cacheFile is the on-disk form.
type cacheFile struct {
	Version int               `json:"version"`
	Files   map[string]result `json:"files"`
}

const cacheVersion = 1

// load reads the cache file once; c.mu is held.
func (c *Cache) load() {
	if c.m == nil {
		c.m = map[string]result{}
	}
	if c.loaded || c.file == "" {
		return
	}
	c.loaded = true
	f, err := os.Open(c.file)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	var cf cacheFile
	if json.NewDecoder(io.LimitReader(f, cacheFileLimit)).Decode(&cf) != nil || cf.Version != cacheVersion {
		return // a malformed or older cache is started again
	}
	for p, r := range cf.Files {
		if len(c.m) >= cacheLimit {
			break
		}
		if !r.persisted() {
			c.dirty = true // an older file's: written again without it
			continue
		}
		if _, ok := c.m[p]; !ok {
			c.m[p] = r
		}
	}
}

// Flush writes the cache to its file when it changed: a new file in the
// same folder (0600, the folder made 0700), renamed over the old one, so
// a reader never sees half of it and two processes never mix theirs.
func (c *Cache) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == "" || !c.dirty {
		return nil
	}
	old := time.Now().Add(-cacheUnused).Unix()
	for p, r := range c.m {
		if r.Used < old {
			delete(c.m, p)
		}
	}
	// Only CUDA libraries go to disk: the answer for any other library
	// (most of an environment's) is a few small reads to get again, and
	// a file of every library in every environment would cost more to
	// load than that.
	kept := map[string]result{}
	for p, r := range c.m {
		if r.persisted() {
			kept[p] = r
		}
	}
	data, err := json.Marshal(cacheFile{Version: cacheVersion, Files: kept})
	if err != nil {
		return fmt.Errorf("writing the CUDA kernel cache: %w", err)
	}
	if err := cachefiles.Replace(c.file, data, time.Now()); err != nil {
		return fmt.Errorf("writing the CUDA kernel cache %s: %w", c.file, err)
	}
	c.dirty = false
	return nil
}
