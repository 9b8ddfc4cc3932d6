package fatbin

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

const (
	maxPESections = 96 // the PE format's own limit
	maxImports    = 4096
	dirImport     = 1  // data directory index of the import table
	dirDelay      = 13 // of the delay-load import table
)

type peSection struct {
	name         string
	vaddr, vsize uint32
	off, size    int64
}

type peFile struct {
	r        io.ReaderAt
	size     int64
	sections []peSection
}

// readPE finds .nv_fatb (section names are 8 bytes at most) in a PE's
// section table and reads its import and delay-load import tables for
// cudart64_N.dll.
func readPE(r io.ReaderAt, size int64) (Kernels, error) {
	var dos [64]byte
	if _, err := r.ReadAt(dos[:], 0); err != nil {
		return Kernels{}, fmt.Errorf("reading the DOS header: %w", err)
	}
	le := binary.LittleEndian
	peOff := int64(le.Uint32(dos[60:]))
	var coff [24]byte
	if peOff <= 0 || peOff > size-24 {
		return Kernels{}, fmt.Errorf("the PE header offset %d is outside the file (%d bytes)", peOff, size)
	}
	if _, err := r.ReadAt(coff[:], peOff); err != nil {
		return Kernels{}, fmt.Errorf("reading the PE header: %w", err)
	}
	if string(coff[:4]) != "PE\x00\x00" {
		return Kernels{}, fmt.Errorf("no PE signature at offset %d", peOff)
	}
	nsec := int64(le.Uint16(coff[6:]))
	optSize := int64(le.Uint16(coff[20:]))
	if nsec > maxPESections {
		return Kernels{}, fmt.Errorf("%d PE sections, more than the format allows", nsec)
	}
	opt := make([]byte, optSize)
	if _, err := r.ReadAt(opt, peOff+24); err != nil {
		return Kernels{}, fmt.Errorf("reading the PE optional header: %w", err)
	}
	f := &peFile{r: r, size: size}
	secs := make([]byte, nsec*40)
	if _, err := r.ReadAt(secs, peOff+24+optSize); err != nil {
		return Kernels{}, fmt.Errorf("reading the PE section table: %w", err)
	}
	var fat *peSection
	for i := range nsec {
		h := secs[i*40:]
		name, _, _ := strings.Cut(string(h[:8]), "\x00")
		s := peSection{name: name, vsize: le.Uint32(h[8:]), vaddr: le.Uint32(h[12:]),
			size: int64(le.Uint32(h[16:])), off: int64(le.Uint32(h[20:]))}
		f.sections = append(f.sections, s)
		if name == ".nv_fatb" && fat == nil {
			fat = &f.sections[len(f.sections)-1]
		}
	}
	var k Kernels
	k.Runtime = f.runtime(opt)
	if fat == nil {
		return k, ErrNoFatbin
	}
	n := fat.size
	if fat.vsize != 0 && int64(fat.vsize) < n {
		n = int64(fat.vsize) // the raw size is rounded up to the file alignment
	}
	if fat.off+n > size {
		return Kernels{}, fmt.Errorf("%w: section .nv_fatb (offset %d, %d bytes) runs past the end of the file (%d bytes)", ErrMalformed, fat.off, n, size)
	}
	if err := walk(r, fat.off, n, &k); err != nil {
		return Kernels{}, fmt.Errorf("%w (section .nv_fatb): %w", ErrMalformed, err)
	}
	return k, nil
}

// runtime reads the import and delay-load import tables named in the
// optional header's data directories; a broken table yields "".
func (f *peFile) runtime(opt []byte) string {
	if len(opt) < 2 {
		return ""
	}
	le := binary.LittleEndian
	dirs := int64(96) // PE32
	if le.Uint16(opt) == 0x20b {
		dirs = 112 // PE32+
	}
	for _, d := range []struct {
		index     int64
		entry     int64 // size of one descriptor
		nameField int64 // offset of its name RVA
	}{{dirImport, 20, 12}, {dirDelay, 32, 4}} {
		at := dirs + d.index*8
		if at+8 > int64(len(opt)) {
			continue
		}
		rva := le.Uint32(opt[at:])
		if rva == 0 {
			continue
		}
		off, ok := f.fileOffset(rva)
		if !ok {
			continue
		}
		desc := make([]byte, d.entry)
		for i := int64(0); i < maxImports; i++ {
			if _, err := f.r.ReadAt(desc, off+i*d.entry); err != nil {
				break
			}
			nameRVA := le.Uint32(desc[d.nameField:])
			if nameRVA == 0 {
				break
			}
			noff, ok := f.fileOffset(nameRVA)
			if !ok {
				continue
			}
			name := strings.ToLower(readCString(f.r, noff, min(maxNameBytes, f.size-noff)))
			if strings.HasPrefix(name, "cudart64_") || strings.HasPrefix(name, "cudart32_") {
				return name
			}
		}
	}
	return ""
}

// fileOffset maps an RVA to where it lies in the file.
func (f *peFile) fileOffset(rva uint32) (int64, bool) {
	for _, s := range f.sections {
		if rva >= s.vaddr && int64(rva-s.vaddr) < s.size {
			off := s.off + int64(rva-s.vaddr)
			return off, off < f.size
		}
	}
	return 0, false
}

// readCString reads a NUL-terminated string of at most n bytes at off.
func readCString(r io.ReaderAt, off, n int64) string {
	if n <= 0 {
		return ""
	}
	buf := make([]byte, n)
	m, _ := r.ReadAt(buf, off)
	s, _, _ := strings.Cut(string(buf[:m]), "\x00")
	return s
}
