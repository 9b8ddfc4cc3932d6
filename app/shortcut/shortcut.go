package shortcut

import (
	"fmt"
	"os"
	"path/filepath"
)

// Name is the Start-menu shortcut's file name, as the MSI makes it.
const Name = "GPU Canary.lnk"

// stamp gives the shortcut at path the AppUserModelID id, rewriting the
// file only when it lacks it; a missing shortcut (GPU Canary run from
// the zip, or from Scoop) is no error and changes nothing.
func stamp(path, id string) (bool, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Start-menu shortcut: %w", err)
	}
	out, changed, err := SetAppID(data, id)
	if err != nil {
		return false, fmt.Errorf("reading the Start-menu shortcut %s: %w", path, err)
	}
	if !changed {
		return false, nil
	}
	// Beside it, then over it: a shortcut cut short would start nothing.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gpucanary-lnk-*")
	if err != nil {
		return false, fmt.Errorf("writing the Start-menu shortcut: %w", err)
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return false, fmt.Errorf("writing the Start-menu shortcut: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("writing the Start-menu shortcut: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("replacing the Start-menu shortcut: %w", err)
	}
	return true, nil
}
