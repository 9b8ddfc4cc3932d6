package fatbin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// kernelsFact is the kind of fact a Cache keeps about a library, one for
// every answer worth keeping (kernelsValue): the kernels it carries,
// that it carries none, that it is no library GPU Canary reads, or what
// is wrong with its fat binary. How a read of it went (a permission, an
// I/O error) is no fact about it and is not kept.
const kernelsFact = "fatbin"

// Cache answers Read of a file by path, from its facts while the file's
// stamp stays the same: a library's headers (159 MB of libggml-cuda.so)
// are read once, then each run stats it.
type Cache struct {
	// Facts keeps the answers, and with a folder (filefacts.Store.UseDir)
	// keeps them across runs; nil keeps them in a store of the cache's
	// own, in memory.
	Facts *filefacts.Store

	mu    sync.Mutex
	mem   *filefacts.Store
	fresh map[string]freshAnswer // answers about files too new to be facts
	reads int                    // files read, not answered from the facts (for tests)
}

// freshAnswer is Read's answer about a file changed within
// filefacts.Racy of its read: no fact is kept of it (it may change again
// within its stamp), but a run that asks again at once (an environment's
// libraries, read again by the next Inspect) is answered from memory, as
// long as the stamp holds, up to maxFresh files.
type freshAnswer struct {
	st filefacts.Stamp
	v  string
}

const maxFresh = 1024

// facts is the store the answers are kept in.
func (c *Cache) facts() *filefacts.Store {
	if c.Facts != nil {
		return c.Facts
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem == nil {
		c.mem = &filefacts.Store{}
	}
	return c.mem
}

// Flush writes the answers kept since the last Flush to the facts'
// folder (filefacts.Store.Flush).
func (c *Cache) Flush() error { return c.facts().Flush() }

// Reads is how many files the cache has read rather than answered.
func (c *Cache) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// ReadFile is Read of the file at path, from the facts while the file is
// unchanged. Only regular files are read: a FIFO or device is an error.
func (c *Cache) ReadFile(path string) (Kernels, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Kernels{}, err
	}
	return c.ReadStated(path, fi)
}

// ReadStated is ReadFile of the file at path whose status the caller has
// just looked at (fi, os.Stat's): an environment's reader has, and its
// libraries are not looked at twice.
func (c *Cache) ReadStated(path string, fi fs.FileInfo) (Kernels, error) {
	if !fi.Mode().IsRegular() {
		return Kernels{}, fmt.Errorf("%s is not a regular file", path)
	}
	st := filefacts.Of(fi)
	facts := c.facts()
	v, ok := facts.Get(kernelsFact, path, st)
	if !ok {
		v, ok = c.freshAnswer(path, st)
	}
	if ok {
		if k, ok, err := decodeKernels(v); ok {
			return k, err
		}
	}
	k, err := readPath(path, fi)
	v, ok = encodeKernels(k, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if !ok {
		return k, err
	}
	if time.Since(fi.ModTime()) < filefacts.Racy {
		if c.fresh == nil || len(c.fresh) >= maxFresh {
			c.fresh = map[string]freshAnswer{}
		}
		c.fresh[path] = freshAnswer{st, v}
	} else {
		delete(c.fresh, path)
		facts.Put(kernelsFact, path, st, v)
	}
	return k, err
}

func (c *Cache) freshAnswer(path string, st filefacts.Stamp) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.fresh[path]
	return a.v, ok && a.st == st
}

// The answers as facts: a tag, then what it says. Fields are separated
// by sep; a value that does not decode is no answer, and the library is
// read again.
const (
	tagKernels   = 'k' // runtime, containers, SASS, PTX (numbers: "86 90a")
	tagNone      = '-' // no fat binary
	tagNotLib    = '!' // not a library GPU Canary reads: why
	tagMalformed = '?' // ErrMalformed: what is wrong, after its words
	sep          = "\x00"
)

// encodeKernels is Read's answer (k, err) as a fact, and whether it is
// one: an error in opening or reading the file (a syscall.Errno under
// it) says how the read went, not what the file holds.
func encodeKernels(k Kernels, err error) (string, bool) {
	var nl notLibrary
	switch {
	case err == nil:
		return string(tagKernels) + strings.Join([]string{k.Runtime, strconv.Itoa(k.Containers),
			strings.Join(archNames(k.SASS), " "), strings.Join(archNames(k.PTX), " ")}, sep), true
	case errors.Is(err, ErrNoFatbin):
		return string(tagNone), true
	case !errors.As(err, &nl) || errors.As(err, new(syscall.Errno)):
		return "", false
	case errors.Is(err, ErrMalformed):
		what, ok := strings.CutPrefix(err.Error(), ErrMalformed.Error())
		return string(tagMalformed) + what, ok
	}
	return string(tagNotLib) + err.Error(), true
}

// decodeKernels is a fact's answer, and false when v is no answer
// encodeKernels writes: the text read back is never used raw, and one
// with a control character (that a terminal would act on) is none.
func decodeKernels(v string) (Kernels, bool, error) {
	if v == "" || strings.IndexFunc(v, func(r rune) bool { return r != 0 && unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return Kernels{}, false, nil
	}
	rest := v[1:]
	switch v[0] {
	case tagNone:
		return Kernels{}, rest == "", ErrNoFatbin
	case tagNotLib:
		return Kernels{}, rest != "" && !strings.Contains(rest, sep), notLibrary{errors.New(rest)}
	case tagMalformed:
		return Kernels{}, !strings.Contains(rest, sep), notLibrary{fmt.Errorf("%w%s", ErrMalformed, rest)}
	case tagKernels:
	default:
		return Kernels{}, false, nil
	}
	f := strings.Split(rest, sep)
	if len(f) != 4 {
		return Kernels{}, false, nil
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 {
		return Kernels{}, false, nil
	}
	k := Kernels{Runtime: f[0], Containers: n}
	var ok1, ok2 bool
	k.SASS, ok1 = parseArchs(f[2])
	k.PTX, ok2 = parseArchs(f[3])
	return k, ok1 && ok2, nil
}

// parseArchs is the numbers archNames wrote, space-separated.
func parseArchs(s string) ([]Arch, bool) {
	var out []Arch
	for _, f := range strings.Fields(s) {
		a, ok := ParseArch(f)
		if !ok {
			return nil, false
		}
		out = append(out, a)
	}
	return out, true
}

// readPath opens and reads one library, checking that what was opened
// is the regular file that was stat'ed.
func readPath(path string, fi os.FileInfo) (Kernels, error) {
	f, err := filefacts.Open(path)
	if err != nil {
		return Kernels{}, err
	}
	defer f.Close()
	if !f.SameFile(fi) {
		return Kernels{}, fmt.Errorf("%s changed while it was opened", path)
	}
	k, err := Read(newHeadReader(f, f.Size()), f.Size())
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
