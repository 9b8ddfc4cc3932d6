//go:build windows

package shortcut

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// StampStartMenu gives GPU Canary's Start-menu shortcut (the MSI's) the
// AppUserModelID id, once: the tray calls it at every start, and it writes
// only when the shortcut lacks it. It reports whether it wrote.
//
// A per-user install puts the shortcut in the user's Start menu; a
// per-machine one (ALLUSERS=1) in the all-users Start menu, which only an
// administrator may write. Both are looked at. An all-users shortcut this
// account may not write is left as it is, without a word: the toasts then
// carry the AppUserModelID registered under HKCU (app/tray's toast.go), as
// they do for the zip, and a tray started as administrator stamps it.
func StampStartMenu(id string) (bool, error) {
	wrote := false
	var errs []error
	for _, m := range []struct {
		folder *windows.KNOWNFOLDERID
		what   string
		shared bool // the all-users one
	}{
		{windows.FOLDERID_Programs, "the Start menu's Programs folder", false},
		{windows.FOLDERID_CommonPrograms, "the all-users Start menu's Programs folder", true},
	} {
		programs, err := windows.KnownFolderPath(m.folder, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("finding %s: %w", m.what, err))
			continue
		}
		w, err := stamp(filepath.Join(programs, Name), id)
		if m.shared && errors.Is(err, fs.ErrPermission) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
		}
		wrote = wrote || w
	}
	return wrote, errors.Join(errs...)
}
