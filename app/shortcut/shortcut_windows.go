//go:build windows

package shortcut

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// StampStartMenu gives the user's Start-menu shortcut to GPU Canary (the
// MSI's) the AppUserModelID id, once: the tray calls it at every start,
// and it writes only when the shortcut lacks it. It reports whether it
// wrote.
func StampStartMenu(id string) (bool, error) {
	programs, err := windows.KnownFolderPath(windows.FOLDERID_Programs, 0)
	if err != nil {
		return false, fmt.Errorf("finding the Start menu's Programs folder: %w", err)
	}
	return stamp(filepath.Join(programs, Name), id)
}
