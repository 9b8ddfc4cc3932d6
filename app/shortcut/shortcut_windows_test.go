//go:build windows

package shortcut

import (
	"os"
	"path/filepath"
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
