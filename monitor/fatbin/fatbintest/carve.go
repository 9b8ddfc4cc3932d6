// Package fatbintest holds real CUDA libraries for tests, carved: only
// the byte ranges the fatbin reader reads of them (their ELF or PE
// headers, the fat binary container and entry headers), every payload
// left out. A carved file is replayed as a ReaderAt that reads zeros
// elsewhere, or written out as a sparse file of the library's real size,
// so tests judge the real headers of a 159 MB library without it.
//
// The format: gzip of "gpucanary-carve 1\n", the size as a decimal line,
// then records of offset (u64), length (u32) and bytes, little endian.
package fatbintest

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const magic = "gpucanary-carve 1\n"

// Range is one span of the library kept.
type Range struct {
	Off  int64
	Data []byte
}

// Carved is a library's size and the ranges kept of it.
type Carved struct {
	Size   int64
	Ranges []Range // sorted, not overlapping
}

// Recorder is a ReaderAt that remembers the spans read through it.
type Recorder struct {
	R     io.ReaderAt
	spans [][2]int64
}

// ReadAt reads from R and records the span.
func (r *Recorder) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.R.ReadAt(p, off)
	if n > 0 {
		r.spans = append(r.spans, [2]int64{off, off + int64(n)})
	}
	return n, err
}

// Carve returns the spans read so far, merged, with their bytes.
func (r *Recorder) Carve(size int64) (Carved, error) {
	spans := slices.Clone(r.spans)
	slices.SortFunc(spans, func(a, b [2]int64) int { return int(min(max(a[0]-b[0], -1), 1)) })
	var merged [][2]int64
	for _, s := range spans {
		if n := len(merged); n > 0 && s[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	c := Carved{Size: size}
	for _, s := range merged {
		buf := make([]byte, s[1]-s[0])
		if _, err := r.R.ReadAt(buf, s[0]); err != nil {
			return Carved{}, fmt.Errorf("reading %d bytes at %d: %w", len(buf), s[0], err)
		}
		c.Ranges = append(c.Ranges, Range{Off: s[0], Data: buf})
	}
	return c, nil
}

// Write writes c in the carve format.
func (c Carved) Write(w io.Writer) error {
	z, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	fmt.Fprintf(z, "%s%d\n", magic, c.Size)
	for _, r := range c.Ranges {
		var h [12]byte
		binary.LittleEndian.PutUint64(h[:], uint64(r.Off))
		binary.LittleEndian.PutUint32(h[8:], uint32(len(r.Data)))
		z.Write(h[:])
		z.Write(r.Data)
	}
	return z.Close()
}

// Load reads a carved file.
func Load(path string) (Carved, error) {
	f, err := os.Open(path)
	if err != nil {
		return Carved{}, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return Carved{}, fmt.Errorf("reading %s: %w", path, err)
	}
	br := bufio.NewReader(z)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != magic {
		return Carved{}, fmt.Errorf("%s is not a carved library", path)
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return Carved{}, fmt.Errorf("reading %s: %w", path, err)
	}
	c := Carved{}
	if c.Size, err = strconv.ParseInt(strings.TrimSpace(line), 10, 64); err != nil {
		return Carved{}, fmt.Errorf("reading %s's size: %w", path, err)
	}
	for {
		var h [12]byte
		if _, err := io.ReadFull(br, h[:]); errors.Is(err, io.EOF) {
			return c, nil
		} else if err != nil {
			return Carved{}, fmt.Errorf("reading %s: %w", path, err)
		}
		r := Range{Off: int64(binary.LittleEndian.Uint64(h[:])), Data: make([]byte, binary.LittleEndian.Uint32(h[8:]))}
		if _, err := io.ReadFull(br, r.Data); err != nil {
			return Carved{}, fmt.Errorf("reading %s: %w", path, err)
		}
		c.Ranges = append(c.Ranges, r)
	}
}

// ReadAt reads the kept bytes, zeros elsewhere.
func (c Carved) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= c.Size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), c.Size-off)
	clear(p[:n])
	// The first range that ends after off, then on while they start before off+n.
	i := sort.Search(len(c.Ranges), func(i int) bool { return c.Ranges[i].Off+int64(len(c.Ranges[i].Data)) > off })
	for _, r := range c.Ranges[i:] {
		if r.Off >= off+n {
			break
		}
		lo, hi := max(off, r.Off), min(off+n, r.Off+int64(len(r.Data)))
		if lo < hi {
			copy(p[lo-off:hi-off], r.Data[lo-r.Off:hi-r.Off])
		}
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// WriteSparse writes the library out at path, at its real size, with
// its kept bytes in place and holes elsewhere.
func (c Carved) WriteSparse(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, r := range c.Ranges {
		if _, err := f.WriteAt(r.Data, r.Off); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Truncate(c.Size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The carved real libraries (monitor/fatbin/testdata, made by
// testdata/carve from the npm packages named there).
const (
	// LinuxGGML is bins/linux-x64-cuda/libggml-cuda.so of
	// @node-llama-cpp/linux-x64-cuda 3.22.1.
	LinuxGGML = "libggml-cuda.so.carve.gz"
	// WindowsGGML is bins/win-x64-cuda/ggml-cuda.dll of
	// @node-llama-cpp/win-x64-cuda 3.21.1.
	WindowsGGML = "ggml-cuda.dll.carve.gz"
	// GGMLKernels is what both carry, read by hand (cuobjdump) and by
	// the reader.
	GGMLKernels = "sm_86 sm_89 sm_120 sm_121 · PTX 75 80 90"
)

// Path is the path of a carved library in monitor/fatbin/testdata.
func Path(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(filepath.Dir(file)), "testdata", name)
}

// MustLoad loads a carved library or panics (test setup only).
func MustLoad(name string) Carved {
	c, err := Load(Path(name))
	if err != nil {
		panic(err)
	}
	return c
}
