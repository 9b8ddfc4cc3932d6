//go:build windows

package shortcut

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestStampInstalledShortcut stamps the Start-menu shortcut the MSI made
// (scripts/wine/msi_e2e.sh runs it under wine after msiexec /i, with
// GPUCANARY_MSI_INSTALLED=1) as the tray does at start, and reads the
// .lnk back.
func TestStampInstalledShortcut(t *testing.T) {
	if os.Getenv("GPUCANARY_MSI_INSTALLED") == "" {
		t.Skip("needs the MSI installed (scripts/wine/msi_e2e.sh)")
	}
	programs, err := windows.KnownFolderPath(windows.FOLDERID_Programs, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(programs, Name)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the MSI's shortcut: %v", err)
	}
	if got, _ := AppID(before); got != "" {
		t.Fatalf("the MSI's shortcut already carries %q", got)
	}
	if wrote, err := StampStartMenu(id); err != nil || !wrote {
		t.Fatalf("StampStartMenu: wrote %v, %v", wrote, err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := AppID(after); err != nil || got != id {
		t.Fatalf("the shortcut read back carries %q, %v", got, err)
	}
	if wrote, err := StampStartMenu(id); err != nil || wrote {
		t.Errorf("a second start wrote again: %v, %v", wrote, err)
	}
}

// TestStampPerMachineShortcut is the same for a per-machine install
// (msiexec /i … ALLUSERS=1): the shortcut is in the all-users Start menu,
// which an account without administrator rights may not write.
// scripts/wine/msi_e2e.sh runs it twice. With
// GPUCANARY_MSI_PER_MACHINE=denied the folder refuses new files (the
// script made it immutable, chattr +i: wine then answers access denied, as
// Windows does to such an account): the shortcut is left as it was,
// without an error, so the tray logs nothing and its toasts carry the
// registered AppUserModelID. With GPUCANARY_MSI_PER_MACHINE=1 (an
// administrator's tray) it is stamped.
func TestStampPerMachineShortcut(t *testing.T) {
	mode := os.Getenv("GPUCANARY_MSI_PER_MACHINE")
	if mode == "" {
		t.Skip("needs the MSI installed per machine (scripts/wine/msi_e2e.sh)")
	}
	common, err := windows.KnownFolderPath(windows.FOLDERID_CommonPrograms, 0)
	if err != nil {
		t.Fatal(err)
	}
	own, err := windows.KnownFolderPath(windows.FOLDERID_Programs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(own, Name)); !os.IsNotExist(err) {
		t.Fatalf("a per-machine install left a shortcut in the user's Start menu: %v", err)
	}
	path := filepath.Join(common, Name)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the MSI's all-users shortcut: %v", err)
	}
	if got, _ := AppID(before); got != "" {
		t.Fatalf("the MSI's shortcut already carries %q", got)
	}

	if mode == "denied" {
		// The folder must refuse a new file as Windows refuses it, or
		// this would test nothing.
		if f, err := os.CreateTemp(common, "probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			t.Fatalf("%s takes new files: the test needs it refusing them", common)
		} else if !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("%s refuses a new file, but not as access denied: %v", common, err)
		}
		wrote, err := StampStartMenu(id)
		if err != nil || wrote {
			t.Errorf("StampStartMenu with an all-users shortcut it may not write: wrote %v, %v; want nothing, no error", wrote, err)
		}
		if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, before) {
			t.Errorf("the shortcut it may not write changed (%v)", err)
		}
		return
	}
	if wrote, err := StampStartMenu(id); err != nil || !wrote {
		t.Fatalf("StampStartMenu with a writable all-users shortcut: wrote %v, %v", wrote, err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := AppID(after); err != nil || got != id {
		t.Fatalf("the shortcut read back carries %q, %v", got, err)
	}
	if entries, err := os.ReadDir(common); err != nil {
		t.Fatal(err)
	} else {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".gpucanary-lnk-") {
				t.Errorf("stamping left %s in the all-users Start menu", e.Name())
			}
		}
	}
}
