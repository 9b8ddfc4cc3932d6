package fatbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// The fat binary layout, as nvcc writes it and cuobjdump reads it (no
// public specification; checked against CUDA 12 and 13 libraries):
// a section holds containers one after another, each a 16-byte header
//
//	u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 size of what follows
//
// then entries, each a header of at least 64 bytes and its payload:
//
//	u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size,
//	u32 compressed size, u32, u16 minor, u16 major (of the format),
//	u32 arch (86 for 8.6), u32 name offset, u32 name size, u64 flags, …
//
// Payloads are usually compressed (flags 0x1000, 0x2000: LZ4; 0x8000: ZSTD)
// and are skipped, never read; an uncompressed ELF payload's own header is
// read for its arch-specific flag (sm_90a), an uncompressed PTX's first
// lines for its .target.
const (
	containerMagic   = 0xBA55ED50
	containerHeader  = 16
	entryHeaderMin   = 64
	entryHeaderMax   = 4096
	kindPTX          = 1
	kindELF          = 2
	flagsCompressed  = 0x1000 | 0x2000 | 0x8000
	maxEntries       = 1 << 16
	maxContainers    = 1 << 16  // a real library has hundreds (libggml-cuda.so: 143)
	maxGap           = 64 << 10 // padding skipped between containers, at most
	ptxTargetWindow  = 1024     // of an uncompressed PTX, searched for .target
	cubinHeaderBytes = 64
)

// walk reads every container in the section [off, off+n) of r.
func walk(r io.ReaderAt, off, n int64, k *Kernels) error {
	if off < 0 || n < 0 || off > (1<<62) || n > (1<<62) {
		return fmt.Errorf("fat binary section at %d of %d bytes is out of range", off, n)
	}
	end := off + n
	r = &blockReader{r: r, end: end, next: -1}
	sass, ptx := set{}, set{}
	pos := off
	entries := 0
	var hdr [containerHeader]byte
	for pos+containerHeader <= end {
		if _, err := r.ReadAt(hdr[:], pos); err != nil {
			return fmt.Errorf("reading the fat binary container header at offset %d: %w", pos, err)
		}
		if binary.LittleEndian.Uint32(hdr[:]) != containerMagic {
			next, err := skipGap(r, pos, end)
			if err != nil {
				return err
			}
			if next < 0 {
				break // only padding to the section's end
			}
			pos = next
			continue
		}
		hsize := int64(binary.LittleEndian.Uint16(hdr[6:]))
		body := binary.LittleEndian.Uint64(hdr[8:])
		if hsize < containerHeader || hsize > entryHeaderMax || body > uint64(end-pos-hsize) {
			return fmt.Errorf("fat binary container at offset %d: header size %d and size %d overrun the section (%d bytes left)", pos, hsize, body, end-pos)
		}
		if k.Containers >= maxContainers {
			return fmt.Errorf("too many containers: more than %d fat binary containers", maxContainers)
		}
		cend := pos + hsize + int64(body)
		for e := pos + hsize; e < cend; {
			entries++
			if entries > maxEntries {
				return fmt.Errorf("more than %d fat binary entries", maxEntries)
			}
			next, err := readEntry(r, e, cend, sass, ptx)
			if err != nil {
				return err
			}
			e = next
		}
		k.Containers++
		pos = cend
	}
	k.SASS, k.PTX = sass.sorted(), ptx.sorted()
	return nil
}

// skipGap finds the next container after padding at pos: zero bytes up
// to maxGap, then the magic at an 8-byte boundary. It returns -1 when
// nothing but zeros is left before end.
func skipGap(r io.ReaderAt, pos, end int64) (int64, error) {
	limit := min(end, pos+maxGap)
	buf := make([]byte, min(limit-pos, 64))
	for p := pos; p < limit; {
		n := min(int64(len(buf)), limit-p)
		if _, err := r.ReadAt(buf[:n], p); err != nil {
			return 0, fmt.Errorf("reading the fat binary section at offset %d: %w", p, err)
		}
		if i := firstNonZero(buf[:n]); i >= 0 {
			q := p + int64(i)
			q -= q % 4
			var m [4]byte
			if _, err := r.ReadAt(m[:], q); err == nil && binary.LittleEndian.Uint32(m[:]) == containerMagic && q > pos {
				return q, nil
			}
			return 0, fmt.Errorf("no fat binary container at offset %d (found neither its magic number nor padding)", q)
		}
		p += n
	}
	if limit < end {
		return 0, fmt.Errorf("more than %d bytes of padding in the fat binary section at offset %d", maxGap, pos)
	}
	return -1, nil
}

// readEntry reads the entry header at e, within its container ending at
// cend, records its arch and returns where the next entry starts.
func readEntry(r io.ReaderAt, e, cend int64, sass, ptx set) (int64, error) {
	var h [entryHeaderMin]byte
	if e+entryHeaderMin > cend {
		return 0, fmt.Errorf("fat binary entry at offset %d: its header overruns the container", e)
	}
	if _, err := r.ReadAt(h[:], e); err != nil {
		return 0, fmt.Errorf("reading the fat binary entry header at offset %d: %w", e, err)
	}
	le := binary.LittleEndian
	kind := le.Uint16(h[0:])
	hsize := int64(le.Uint32(h[4:]))
	psize := le.Uint64(h[8:])
	arch := le.Uint32(h[28:])
	flags := le.Uint64(h[40:])
	if hsize < entryHeaderMin || hsize > entryHeaderMax || e+hsize > cend || psize > uint64(cend-e-hsize) {
		return 0, fmt.Errorf("fat binary entry at offset %d: header size %d and payload size %d overrun the container", e, hsize, psize)
	}
	if arch < 10 || arch > 9999 {
		return 0, fmt.Errorf("fat binary entry at offset %d: arch %d is not a GPU architecture", e, arch)
	}
	a := Arch{Major: int(arch / 10), Minor: int(arch % 10)}
	payload := e + hsize
	plain := flags&flagsCompressed == 0
	switch kind {
	case kindELF, 0x10:
		if plain && psize >= cubinHeaderBytes {
			a.Suffix = cubinSuffix(r, payload)
		}
		sass[a] = true
	case kindPTX:
		if plain {
			a.Suffix = ptxSuffix(r, payload, int64(min(psize, ptxTargetWindow)), a)
		}
		ptx[a] = true
	}
	return payload + int64(psize), nil
}

// cubinSuffix reads an uncompressed cubin's ELF header for the flag of
// arch-specific code: EF_CUDA_ACCELERATORS (0x800) in e_flags before
// CUDA's ELF ABI version 8, 0x8 from it on (as LLVM's ELF.h names them).
func cubinSuffix(r io.ReaderAt, at int64) string {
	var h [cubinHeaderBytes]byte
	if _, err := r.ReadAt(h[:], at); err != nil || string(h[:4]) != "\x7fELF" || h[4] != 2 {
		return ""
	}
	flags := binary.LittleEndian.Uint32(h[48:])
	if h[8] >= 8 {
		if flags&0x8 != 0 {
			return "a"
		}
		return ""
	}
	if flags&0x800 != 0 {
		return "a"
	}
	return ""
}

// ptxSuffix reads an uncompressed PTX's ".target sm_90a" line.
func ptxSuffix(r io.ReaderAt, at, n int64, a Arch) string {
	buf := make([]byte, n)
	m, _ := r.ReadAt(buf, at)
	_, rest, ok := bytes.Cut(buf[:m], []byte(".target sm_"+fmt.Sprint(a.Major*10+a.Minor)))
	if ok && len(rest) > 0 && (rest[0] == 'a' || rest[0] == 'f') {
		return string(rest[:1])
	}
	return ""
}

// firstNonZero is the index of the first byte of b that is not zero, or -1.
func firstNonZero(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}

// Read-ahead of blockReader: none for a read where the last did not end
// (a header after a skipped payload: a library's headers are a few KB of
// its hundreds of MB) nor for the next two (a container's header, then
// its first entry's), then doubling from minAhead to maxAhead while the
// reads run on one after another (containers or padding packed
// together), so that a section of tiny containers is read in blocks,
// not 16 bytes at a time.
const (
	minAhead = 256
	maxAhead = 1 << 20
)

// blockReader answers reads from the last block it read, reading ahead
// within the section (up to end) while the reads are sequential.
type blockReader struct {
	r     io.ReaderAt
	end   int64
	buf   []byte
	off   int64 // buf holds [off, off+len(buf))
	next  int64 // where the last read ended
	run   int   // reads in a row that started where the last ended, up to 2
	ahead int
}

func (b *blockReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= b.off && off+int64(len(p)) <= b.off+int64(len(b.buf)) {
		n := copy(p, b.buf[off-b.off:])
		b.next = off + int64(n)
		return n, nil
	}
	switch {
	case off != b.next:
		b.run, b.ahead = 0, 0
	case b.run < 2:
		b.run++ // a header after a header: entries of one container
	default:
		b.ahead = min(max(2*b.ahead, minAhead), maxAhead)
	}
	size := int64(len(p)) + int64(b.ahead)
	if off < b.end {
		size = min(size, max(b.end-off, int64(len(p))))
	}
	if size <= int64(len(p)) {
		n, err := b.r.ReadAt(p, off)
		b.next = off + int64(n)
		return n, err
	}
	if int64(cap(b.buf)) < size {
		b.buf = make([]byte, size)
	}
	n, err := b.r.ReadAt(b.buf[:size], off)
	b.buf, b.off = b.buf[:n], off
	m := copy(p, b.buf)
	b.next = off + int64(m)
	if m < len(p) {
		if err == nil {
			err = io.EOF
		}
		return m, err
	}
	return m, nil
}
