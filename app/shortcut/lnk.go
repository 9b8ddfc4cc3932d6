// Package shortcut gives GPU Canary's Start-menu shortcut the
// AppUserModelID its toasts carry, so Windows counts them as the installed
// app's from the first one.
//
// The MSI (packaging/windows/gpucanary.wxs) makes the shortcut, but wixl
// writes no shortcut properties, and an MSI cannot set this one without
// them; the app therefore stamps its own shortcut when it starts. The
// usual way, IPropertyStore on a shell link, is a stub in wine (SetValue
// answers S_OK and nothing is saved), so nothing could test it there.
// This package writes the property into the .lnk file itself instead: the
// PropertyStoreDataBlock of the file's extra data (MS-SHLLINK 2.5.7)
// holding a serialized property storage (MS-PROPSTORE 2.2) for
// PKEY_AppUserModel_ID, which the shell reads as it reads one written
// through IPropertyStore. The parsing is plain Go, so Linux tests and
// wine run the same code on a shortcut wine's msiexec made.
package shortcut

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
)

const (
	headerSize = 0x4C
	// LinkFlags bits that decide which structures follow the header.
	hasIDList    = 0x1
	hasLinkInfo  = 0x2
	isUnicode    = 0x80
	stringFlags  = 0x4 | 0x8 | 0x10 | 0x20 | 0x40 // name, relative path, working dir, arguments, icon
	propertySig  = 0xA0000009                     // PropertyStoreDataBlock
	storageMagic = 0x53505331                     // "1SPS"
	vtLPWSTR     = 0x1F
	appIDPID     = 5 // PKEY_AppUserModel_ID's property ID
)

// appIDFormat is PKEY_AppUserModel_ID's format ID,
// {9F4C2855-9F79-4B39-A8D0-E1D42DE1D5F3}, in its on-disk byte order.
var appIDFormat = [16]byte{0x55, 0x28, 0x4C, 0x9F, 0x79, 0x9F, 0x39, 0x4B, 0xA8, 0xD0, 0xE1, 0xD4, 0x2D, 0xE1, 0xD5, 0xF3}

var errNotLink = errors.New("not a shell link (.lnk) file")

// extraData returns where the extra data blocks start in a .lnk file.
func extraData(lnk []byte) (int, error) {
	if len(lnk) < headerSize || binary.LittleEndian.Uint32(lnk) != headerSize {
		return 0, errNotLink
	}
	flags := binary.LittleEndian.Uint32(lnk[20:])
	off := headerSize
	need := func(n int) error {
		if off+n > len(lnk) {
			return fmt.Errorf("%w: cut short at byte %d", errNotLink, off)
		}
		return nil
	}
	if flags&hasIDList != 0 {
		if err := need(2); err != nil {
			return 0, err
		}
		off += 2 + int(binary.LittleEndian.Uint16(lnk[off:]))
	}
	if flags&hasLinkInfo != 0 {
		if err := need(4); err != nil {
			return 0, err
		}
		off += int(binary.LittleEndian.Uint32(lnk[off:]))
	}
	width := 1
	if flags&isUnicode != 0 {
		width = 2
	}
	for bit := uint32(0x4); bit <= 0x40; bit <<= 1 {
		if flags&bit == 0 {
			continue
		}
		if err := need(2); err != nil {
			return 0, err
		}
		off += 2 + width*int(binary.LittleEndian.Uint16(lnk[off:]))
	}
	if err := need(0); err != nil {
		return 0, err
	}
	return off, nil
}

// block is one extra data block: its bytes, size and signature included.
type block []byte

func (b block) signature() uint32 { return binary.LittleEndian.Uint32(b[4:]) }

// blocks splits the extra data into blocks, up to the terminal block.
func blocks(extra []byte) ([]block, error) {
	var out []block
	for off := 0; ; {
		if off+4 > len(extra) {
			return nil, fmt.Errorf("%w: the extra data has no terminal block", errNotLink)
		}
		size := int(binary.LittleEndian.Uint32(extra[off:]))
		if size < 4 {
			return out, nil
		}
		if size < 8 || off+size > len(extra) {
			return nil, fmt.Errorf("%w: an extra data block of %d bytes at %d", errNotLink, size, off)
		}
		out = append(out, block(extra[off:off+size]))
		off += size
	}
}

// storages splits a PropertyStoreDataBlock's property store into its
// serialized storages (each with its size field), up to the zero that ends
// them.
func storages(b block) ([][]byte, error) {
	data := b[8:]
	var out [][]byte
	for off := 0; ; {
		if off+4 > len(data) {
			return nil, fmt.Errorf("%w: the property store has no end", errNotLink)
		}
		size := int(binary.LittleEndian.Uint32(data[off:]))
		if size == 0 {
			return out, nil
		}
		if size < 24 || off+size > len(data) || binary.LittleEndian.Uint32(data[off+4:]) != storageMagic {
			return nil, fmt.Errorf("%w: a property storage of %d bytes at %d", errNotLink, size, off)
		}
		out = append(out, data[off:off+size])
		off += size
	}
}

// values splits a storage with integer property IDs into its values
// (each with its size field).
func values(storage []byte) ([][]byte, error) {
	var out [][]byte
	for off := 24; ; {
		if off+4 > len(storage) {
			return nil, fmt.Errorf("%w: a property storage has no end", errNotLink)
		}
		size := int(binary.LittleEndian.Uint32(storage[off:]))
		if size == 0 {
			return out, nil
		}
		if size < 13 || off+size > len(storage) {
			return nil, fmt.Errorf("%w: a property value of %d bytes at %d", errNotLink, size, off)
		}
		out = append(out, storage[off:off+size])
		off += size
	}
}

// AppID returns the AppUserModelID a .lnk file carries, "" when none.
func AppID(lnk []byte) (string, error) {
	off, err := extraData(lnk)
	if err != nil {
		return "", err
	}
	bs, err := blocks(lnk[off:])
	if err != nil {
		return "", err
	}
	for _, b := range bs {
		if b.signature() != propertySig {
			continue
		}
		ss, err := storages(b)
		if err != nil {
			return "", err
		}
		for _, s := range ss {
			if !bytes.Equal(s[8:24], appIDFormat[:]) {
				continue
			}
			vs, err := values(s)
			if err != nil {
				return "", err
			}
			for _, v := range vs {
				if binary.LittleEndian.Uint32(v[4:]) == appIDPID {
					return decodeString(v[9:])
				}
			}
		}
	}
	return "", nil
}

// decodeString reads a typed VT_LPWSTR value: type, padding, the count of
// UTF-16 units with the terminating zero, the units.
func decodeString(v []byte) (string, error) {
	if len(v) < 8 || binary.LittleEndian.Uint16(v) != vtLPWSTR {
		return "", fmt.Errorf("%w: the AppUserModelID is not a string", errNotLink)
	}
	n := int(binary.LittleEndian.Uint32(v[4:]))
	if n < 1 || 8+2*n > len(v) {
		return "", fmt.Errorf("%w: an AppUserModelID of %d characters", errNotLink, n)
	}
	units := make([]uint16, n-1)
	for i := range units {
		units[i] = binary.LittleEndian.Uint16(v[8+2*i:])
	}
	return string(utf16.Decode(units)), nil
}

// appIDStorage is a serialized property storage holding id as
// PKEY_AppUserModel_ID, and the values of old (a storage of the same
// format) with other IDs.
func appIDStorage(id string, old []byte) ([]byte, error) {
	units := append(utf16.Encode([]rune(id)), 0)
	typed := make([]byte, 8, 8+2*len(units)+2)
	binary.LittleEndian.PutUint16(typed, vtLPWSTR)
	binary.LittleEndian.PutUint32(typed[4:], uint32(len(units)))
	for _, u := range units {
		typed = binary.LittleEndian.AppendUint16(typed, u)
	}
	for len(typed)%4 != 0 {
		typed = append(typed, 0)
	}
	value := binary.LittleEndian.AppendUint32(nil, uint32(9+len(typed)))
	value = binary.LittleEndian.AppendUint32(value, appIDPID)
	value = append(value, 0)
	value = append(value, typed...)

	body := []byte{}
	if old != nil {
		vs, err := values(old)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if binary.LittleEndian.Uint32(v[4:]) != appIDPID {
				body = append(body, v...)
			}
		}
	}
	body = append(body, value...)
	body = append(body, 0, 0, 0, 0)
	s := binary.LittleEndian.AppendUint32(nil, uint32(24+len(body)))
	s = binary.LittleEndian.AppendUint32(s, storageMagic)
	s = append(s, appIDFormat[:]...)
	return append(s, body...), nil
}

// SetAppID returns lnk carrying id as its AppUserModelID, and whether
// that changed anything. Every other block and property is kept as it
// was.
func SetAppID(lnk []byte, id string) ([]byte, bool, error) {
	if have, err := AppID(lnk); err != nil {
		return nil, false, err
	} else if have == id {
		return lnk, false, nil
	}
	off, _ := extraData(lnk)
	bs, _ := blocks(lnk[off:])
	out := append([]byte{}, lnk[:off]...)
	stamped := false
	for _, b := range bs {
		if b.signature() != propertySig {
			out = append(out, b...)
			continue
		}
		ss, _ := storages(b)
		var store []byte
		for _, s := range ss {
			if !bytes.Equal(s[8:24], appIDFormat[:]) {
				store = append(store, s...)
				continue
			}
			s2, err := appIDStorage(id, s)
			if err != nil {
				return nil, false, err
			}
			store = append(store, s2...)
			stamped = true
		}
		if !stamped {
			s2, _ := appIDStorage(id, nil)
			store = append(store, s2...)
			stamped = true
		}
		out = append(out, propertyBlock(store)...)
	}
	if !stamped {
		s, _ := appIDStorage(id, nil)
		out = append(out, propertyBlock(s)...)
	}
	return append(out, 0, 0, 0, 0), true, nil
}

// propertyBlock is a PropertyStoreDataBlock holding the storages store.
func propertyBlock(store []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(8+len(store)+4))
	b = binary.LittleEndian.AppendUint32(b, propertySig)
	b = append(b, store...)
	return append(b, 0, 0, 0, 0)
}
