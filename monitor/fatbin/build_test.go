package fatbin

import (
	"bytes"
	"encoding/binary"
)

// The builders below make small, well-formed libraries for the tests of
// what the real ones (testdata) do not show: arch-specific code, PTX
// only, 32-bit ELF, delay-loaded cudart, and every kind of breakage.

// entry is one fat binary entry to build.
type entry struct {
	kind    uint16
	arch    uint32
	flags   uint64
	payload []byte
}

// container builds one container of entries.
func container(es ...entry) []byte {
	var body bytes.Buffer
	for _, e := range es {
		h := make([]byte, 64)
		le := binary.LittleEndian
		le.PutUint16(h[0:], e.kind)
		le.PutUint16(h[2:], 0x0101)
		le.PutUint32(h[4:], 64)
		le.PutUint64(h[8:], uint64(len(e.payload)))
		le.PutUint32(h[16:], uint32(len(e.payload)))
		le.PutUint32(h[28:], e.arch)
		le.PutUint64(h[40:], e.flags)
		body.Write(h)
		body.Write(e.payload)
	}
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, containerMagic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[6:], 16)
	binary.LittleEndian.PutUint64(h[8:], uint64(body.Len()))
	return append(h, body.Bytes()...)
}

// zstd is an entry's flags for a compressed payload (as CUDA 13 writes).
const zstd = 0x8011

// cubin is the ELF header of an uncompressed cubin with e_flags flags
// and EI_ABIVERSION abi.
func cubin(abi byte, flags uint32) []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	h[8] = abi
	binary.LittleEndian.PutUint32(h[48:], flags)
	return h
}

// elfLib builds a 64-bit little-endian ELF shared object with a
// .nv_fatbin section holding fat (when non-nil) and a .dynamic section
// naming needed.
func elfLib(fat []byte, needed ...string) []byte {
	le := binary.LittleEndian
	shstr := []byte("\x00.shstrtab\x00.nv_fatbin\x00.dynamic\x00.dynstr\x00")
	dynstr := []byte{0}
	var dyn []byte
	for _, n := range needed {
		d := make([]byte, 16)
		le.PutUint64(d, dtNeeded)
		le.PutUint64(d[8:], uint64(len(dynstr)))
		dyn = append(dyn, d...)
		dynstr = append(append(dynstr, n...), 0)
	}
	dyn = append(dyn, make([]byte, 16)...) // DT_NULL
	type sec struct {
		name uint32
		typ  uint32
		data []byte
		link uint32
	}
	secs := []sec{{}, {1, 3, shstr, 0}, {21, 6, dyn, 3}, {30, 3, dynstr, 0}}
	if fat != nil {
		secs = append(secs, sec{11, 1, fat, 0})
	}
	out := make([]byte, 64)
	offs := make([]int, len(secs))
	for i, s := range secs {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		offs[i] = len(out)
		out = append(out, s.data...)
	}
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := len(out)
	for i, s := range secs {
		h := make([]byte, 64)
		le.PutUint32(h[0:], s.name)
		le.PutUint32(h[4:], s.typ)
		if i > 0 {
			le.PutUint64(h[24:], uint64(offs[i]))
			le.PutUint64(h[32:], uint64(len(s.data)))
		}
		le.PutUint32(h[40:], s.link)
		out = append(out, h...)
	}
	copy(out, "\x7fELF\x02\x01\x01")
	le.PutUint16(out[16:], 3) // ET_DYN
	le.PutUint64(out[40:], uint64(shoff))
	le.PutUint16(out[58:], 64)
	le.PutUint16(out[60:], uint16(len(secs)))
	le.PutUint16(out[62:], 1)
	return out
}

// peLib builds a PE32+ DLL with a .nv_fatb section holding fat (when
// non-nil) and an .rdata section whose import table (delay-load table
// when delay) names imports.
func peLib(fat []byte, delay bool, imports ...string) []byte {
	le := binary.LittleEndian
	const rdataRVA, fatRVA = 0x1000, 0x10000
	// .rdata: descriptors, then the names.
	descSize, nameField, dir := 20, 12, dirImport
	if delay {
		descSize, nameField, dir = 32, 4, dirDelay
	}
	rdata := make([]byte, (len(imports)+1)*descSize)
	for i, n := range imports {
		le.PutUint32(rdata[i*descSize+nameField:], uint32(rdataRVA+len(rdata)))
		rdata = append(append(rdata, n...), 0)
	}
	opt := make([]byte, 240)
	le.PutUint16(opt, 0x20b)
	le.PutUint32(opt[112+dir*8:], rdataRVA)
	le.PutUint32(opt[112+dir*8+4:], uint32((len(imports)+1)*descSize))
	type sec struct {
		name string
		rva  uint32
		data []byte
	}
	secs := []sec{{".rdata", rdataRVA, rdata}}
	if fat != nil {
		secs = append(secs, sec{".nv_fatb", fatRVA, fat})
	}
	out := make([]byte, 64)
	out[0], out[1] = 'M', 'Z'
	le.PutUint32(out[60:], 64)
	coff := make([]byte, 24)
	copy(coff, "PE\x00\x00")
	le.PutUint16(coff[6:], uint16(len(secs)))
	le.PutUint16(coff[20:], uint16(len(opt)))
	out = append(append(out, coff...), opt...)
	table := len(out)
	out = append(out, make([]byte, 40*len(secs))...)
	for i, s := range secs {
		for len(out)%512 != 0 {
			out = append(out, 0)
		}
		h := out[table+40*i:]
		copy(h, s.name)
		le.PutUint32(h[8:], uint32(len(s.data)))
		le.PutUint32(h[12:], s.rva)
		raw := (len(s.data) + 511) &^ 511
		le.PutUint32(h[16:], uint32(raw))
		le.PutUint32(h[20:], uint32(len(out)))
		out = append(out, s.data...)
		out = append(out, make([]byte, raw-len(s.data))...)
	}
	return out
}
