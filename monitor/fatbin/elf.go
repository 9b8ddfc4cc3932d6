package fatbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

const (
	maxSections   = 1 << 16
	maxDynamic    = 1 << 16 // entries of .dynamic read, at most
	maxNameBytes  = 256     // of a section or library name
	shtDynamic    = 6
	dtNull        = 0
	dtNeeded      = 1
	elfSectionHdr = 64 // ELF64; ELF32's is 40
)

// elfFile is what is read of an ELF file's headers.
type elfFile struct {
	r     io.ReaderAt
	size  int64
	bo    binary.ByteOrder
	is64  bool
	shoff int64
	shent int64
	shnum int64
	names int64 // file offset of the section name table
	nsize int64
}

type elfSection struct {
	name      string
	nameIdx   uint32 // into the section name table
	typ       uint32
	off, size int64
	link      uint32
}

// readELF finds .nv_fatbin through the section headers and reads the
// DT_NEEDED entries of .dynamic for the CUDA runtime.
func readELF(r io.ReaderAt, size int64) (Kernels, error) {
	f, err := openELF(r, size)
	if err != nil {
		return Kernels{}, err
	}
	var k Kernels
	var fat, dyn *elfSection
	for i := range f.shnum {
		s, err := f.section(i)
		if err != nil {
			return Kernels{}, err
		}
		switch {
		case s.name == ".nv_fatbin":
			fat = &s
		case s.typ == shtDynamic && dyn == nil:
			dyn = &s
		}
	}
	if dyn != nil {
		k.Runtime = f.runtime(*dyn)
	}
	if fat == nil {
		return k, ErrNoFatbin
	}
	if fat.off+fat.size > size {
		return Kernels{}, fmt.Errorf("%w: section .nv_fatbin (offset %d, %d bytes) runs past the end of the file (%d bytes)", ErrMalformed, fat.off, fat.size, size)
	}
	if err := walk(r, fat.off, fat.size, &k); err != nil {
		return Kernels{}, fmt.Errorf("%w (section .nv_fatbin): %w", ErrMalformed, err)
	}
	return k, nil
}

func openELF(r io.ReaderAt, size int64) (*elfFile, error) {
	var id [64]byte
	if _, err := r.ReadAt(id[:52], 0); err != nil {
		return nil, fmt.Errorf("reading the ELF header: %w", err)
	}
	f := &elfFile{r: r, size: size}
	switch id[5] {
	case 1:
		f.bo = binary.LittleEndian
	case 2:
		f.bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("ELF data encoding %d is neither little nor big endian", id[5])
	}
	switch id[4] {
	case 1:
		f.shoff = int64(f.bo.Uint32(id[32:]))
		f.shent = int64(f.bo.Uint16(id[46:]))
		f.shnum = int64(f.bo.Uint16(id[48:]))
		shstr := int64(f.bo.Uint16(id[50:]))
		return f.finish(shstr, 40)
	case 2:
		f.is64 = true
		if _, err := r.ReadAt(id[:], 0); err != nil {
			return nil, fmt.Errorf("reading the ELF header: %w", err)
		}
		f.shoff = int64(f.bo.Uint64(id[40:]))
		f.shent = int64(f.bo.Uint16(id[58:]))
		f.shnum = int64(f.bo.Uint16(id[60:]))
		shstr := int64(f.bo.Uint16(id[62:]))
		return f.finish(shstr, elfSectionHdr)
	}
	return nil, fmt.Errorf("ELF class %d is neither 32 nor 64 bits", id[4])
}

// finish checks the section header table and reads where the section
// names are.
func (f *elfFile) finish(shstr, minEnt int64) (*elfFile, error) {
	if f.shnum == 0 {
		return nil, ErrNoFatbin // no section headers (stripped of them): nothing to find the section by
	}
	if f.shent < minEnt || f.shnum > maxSections || f.shoff < 0 || f.shoff > f.size || f.shnum*f.shent > f.size-f.shoff {
		return nil, fmt.Errorf("the ELF section header table (offset %d, %d entries of %d bytes) does not fit the file (%d bytes)", f.shoff, f.shnum, f.shent, f.size)
	}
	if shstr >= f.shnum {
		return nil, fmt.Errorf("the ELF section name table index %d is past the %d sections", shstr, f.shnum)
	}
	s, err := f.raw(shstr)
	if err != nil {
		return nil, err
	}
	f.names, f.nsize = s.off, s.size
	return f, nil
}

// raw reads section header i without its name.
func (f *elfFile) raw(i int64) (elfSection, error) {
	var h [elfSectionHdr]byte
	n := min(f.shent, elfSectionHdr)
	if _, err := f.r.ReadAt(h[:n], f.shoff+i*f.shent); err != nil {
		return elfSection{}, fmt.Errorf("reading ELF section header %d: %w", i, err)
	}
	var s elfSection
	if f.is64 {
		s.nameIdx = f.bo.Uint32(h[0:])
		s.typ = f.bo.Uint32(h[4:])
		s.off = int64(f.bo.Uint64(h[24:]))
		s.size = int64(f.bo.Uint64(h[32:]))
		s.link = f.bo.Uint32(h[40:])
	} else {
		s.nameIdx = f.bo.Uint32(h[0:])
		s.typ = f.bo.Uint32(h[4:])
		s.off = int64(f.bo.Uint32(h[16:]))
		s.size = int64(f.bo.Uint32(h[20:]))
		s.link = f.bo.Uint32(h[24:])
	}
	if s.off < 0 || s.size < 0 {
		return elfSection{}, fmt.Errorf("ELF section header %d has an offset or size out of range", i)
	}
	return s, nil
}

// section reads section header i and its name.
func (f *elfFile) section(i int64) (elfSection, error) {
	s, err := f.raw(i)
	if err != nil {
		return s, err
	}
	if idx := int64(s.nameIdx); idx < f.nsize {
		s.name = f.str(f.names+idx, min(maxNameBytes, f.nsize-idx))
	}
	return s, nil
}

// str reads a NUL-terminated string of at most n bytes at off ("" when
// it cannot be read).
func (f *elfFile) str(off, n int64) string {
	if off < 0 || off >= f.size || n <= 0 {
		return ""
	}
	buf := make([]byte, min(n, f.size-off))
	m, _ := f.r.ReadAt(buf, off)
	s, _, _ := bytes.Cut(buf[:m], []byte{0})
	return string(s)
}

// runtime reads the DT_NEEDED entries of the dynamic section for
// libcudart.so.N; a broken table yields "" (the kernels still count).
func (f *elfFile) runtime(dyn elfSection) string {
	if int64(dyn.link) >= f.shnum {
		return ""
	}
	strs, err := f.raw(int64(dyn.link))
	if err != nil {
		return ""
	}
	ent := int64(16)
	if !f.is64 {
		ent = 8
	}
	if dyn.off > f.size || dyn.size > f.size-dyn.off {
		return ""
	}
	n := min(dyn.size/ent, maxDynamic)
	buf := make([]byte, n*ent)
	m, _ := f.r.ReadAt(buf, dyn.off)
	for i := int64(0); (i+1)*ent <= int64(m); i++ {
		var tag, val uint64
		if f.is64 {
			tag, val = f.bo.Uint64(buf[i*ent:]), f.bo.Uint64(buf[i*ent+8:])
		} else {
			tag, val = uint64(f.bo.Uint32(buf[i*ent:])), uint64(f.bo.Uint32(buf[i*ent+4:]))
		}
		if tag == dtNull {
			break
		}
		if tag != dtNeeded || val >= uint64(strs.size) {
			continue
		}
		name := f.str(strs.off+int64(val), min(maxNameBytes, strs.size-int64(val)))
		if strings.HasPrefix(name, "libcudart.so") {
			return name
		}
	}
	return ""
}
