//go:build windows

package app

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows/registry"
)

// Start at login on Windows is a value in the user's Run key, which
// Windows starts at login like a shortcut in the Startup folder (and lists
// in Task Manager's Startup tab), without needing COM to write a .lnk.

const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

func autostartEnabled() bool {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	defer k.Close()
	_, _, err = k.GetStringValue("GPU Canary")
	return err == nil
}

// setAutostart adds or removes GPU Canary in the user's Run key.
func setAutostart(on bool) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("opening the Run key: %w", err)
	}
	defer k.Close()
	if !on {
		_ = k.DeleteValue("GPU Canary")
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program: %w", err)
	}
	return k.SetStringValue("GPU Canary", `"`+exe+`"`)
}
