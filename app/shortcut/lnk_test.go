package shortcut

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

const id = "io.github.gpucanary"

// testdata/msiexec-wine8.lnk is the Start-menu shortcut wine 8's msiexec
// made from GPU Canary's MSI (scripts/wine/msi_e2e.sh's install).
func fixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/msiexec-wine8.lnk")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestStampMSIShortcut(t *testing.T) {
	lnk := fixture(t)
	if got, err := AppID(lnk); err != nil || got != "" {
		t.Fatalf("AppID of the unstamped shortcut = %q, %v", got, err)
	}
	off, err := extraData(lnk)
	if err != nil {
		t.Fatal(err)
	}
	out, changed, err := SetAppID(lnk, id)
	if err != nil || !changed {
		t.Fatalf("SetAppID: changed %v, %v", changed, err)
	}
	if got, err := AppID(out); err != nil || got != id {
		t.Fatalf("AppID after SetAppID = %q, %v", got, err)
	}
	if !bytes.Equal(out[:off], lnk[:off]) {
		t.Error("SetAppID changed the header, target or strings")
	}
	// The sizes MS-SHLLINK and MS-PROPSTORE give for this ID: the value
	// is 4 (size) + 4 (ID) + 1 + 2 (type) + 2 + 4 (count) + 2*20 (19
	// characters and the zero) = 57 bytes; its storage 4 + 4 + 16 + 57 + 4
	// = 85; the block 4 + 4 + 85 + 4 = 97; then the terminal block.
	block := out[off:]
	if len(block) != 97+4 || binary.LittleEndian.Uint32(block) != 97 || binary.LittleEndian.Uint32(block[4:]) != 0xA0000009 ||
		binary.LittleEndian.Uint32(block[8:]) != 85 || binary.LittleEndian.Uint32(block[32:]) != 57 {
		t.Errorf("the property block: % x", block)
	}
	again, changed, err := SetAppID(out, id)
	if err != nil || changed || !bytes.Equal(again, out) {
		t.Errorf("stamping a stamped shortcut: changed %v, %v", changed, err)
	}
}

// A shortcut that already has properties, another ID among them, keeps
// every other property and gets this ID in place of the old.
func TestStampKeepsOtherProperties(t *testing.T) {
	lnk := fixture(t)
	off, _ := extraData(lnk)
	other := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	// A storage of another format with one value, and the AppUserModelID
	// storage with the old ID and a property 9 (the toast activator).
	otherStorage := func() []byte {
		v := append(binary.LittleEndian.AppendUint32(nil, 13+4), 0x2, 0, 0, 0, 0, 0x13, 0, 0, 0)
		v = append(v, 7, 0, 0, 0)
		s := binary.LittleEndian.AppendUint32(nil, uint32(24+len(v)+4))
		s = binary.LittleEndian.AppendUint32(s, storageMagic)
		s = append(s, other[:]...)
		return append(append(s, v...), 0, 0, 0, 0)
	}()
	old, err := appIDStorage("Old.App", nil)
	if err != nil {
		t.Fatal(err)
	}
	act := append(binary.LittleEndian.AppendUint32(nil, 13+4), 9, 0, 0, 0, 0, 0x13, 0, 0, 0)
	act = append(act, 42, 0, 0, 0)
	old, err = appIDStorage("Old.App", append(append(old[:24:24], act...), 0, 0, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	in := append(append(append([]byte{}, lnk[:off]...), propertyBlock(append(otherStorage, old...))...), 0, 0, 0, 0)
	if got, err := AppID(in); err != nil || got != "Old.App" {
		t.Fatalf("AppID of the made-up shortcut = %q, %v", got, err)
	}
	out, changed, err := SetAppID(in, id)
	if err != nil || !changed {
		t.Fatalf("SetAppID: %v, %v", changed, err)
	}
	if got, _ := AppID(out); got != id {
		t.Errorf("AppID = %q", got)
	}
	if !bytes.Contains(out, otherStorage) {
		t.Error("the other format's storage is gone")
	}
	if !bytes.Contains(out, act) {
		t.Error("property 9 of the AppUserModelID format is gone")
	}
	if bytes.Contains(out, []byte{'O', 0, 'l', 0, 'd', 0}) {
		t.Error("the old ID is still there")
	}
}

func TestNotALink(t *testing.T) {
	lnk := fixture(t)
	for name, data := range map[string][]byte{
		"empty":         nil,
		"text":          []byte("[InternetShortcut]\r\nURL=https://example.com\r\n"),
		"cut short":     lnk[:headerSize+10],
		"no terminator": lnk[:len(lnk)-4],
	} {
		if _, err := AppID(data); err == nil {
			t.Errorf("%s: AppID: no error", name)
		}
		if _, _, err := SetAppID(data, id); err == nil {
			t.Errorf("%s: SetAppID: no error", name)
		}
	}
}
