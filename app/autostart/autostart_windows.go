//go:build windows

package autostart

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows/registry"
)

// Start at login on Windows is a value in the user's Run key, which
// Windows starts at login like a shortcut in the Startup folder (and lists
// in Task Manager's Startup tab), without needing COM to write a .lnk.

const (
	runKey   = `Software\Microsoft\Windows\CurrentVersion\Run`
	runValue = "GPU Canary"
)

// Enabled reports whether GPU Canary starts at login.
func Enabled() bool {
	_, err := runCommand()
	return err == nil
}

// runCommand is the Run key's value for GPU Canary.
func runCommand() (string, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		return "", err
	}
	defer k.Close()
	v, _, err := k.GetStringValue(runValue)
	return v, err
}

// Set adds or removes GPU Canary in the user's Run key.
func Set(on bool) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("opening the Run key: %w", err)
	}
	defer k.Close()
	if !on {
		_ = k.DeleteValue(runValue)
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program: %w", err)
	}
	return k.SetStringValue(runValue, runLine(exe))
}

// runLine is the Run key's command that starts exe.
func runLine(exe string) string { return `"` + exe + `"` }

// Repoint makes an enabled start at login start this program, where it is
// now: a user who moved the unpacked folder (or unpacked a new version
// elsewhere) would otherwise find GPU Canary gone at the next login, or an
// old copy started. The tray calls it at every start; it reports whether
// the value was rewritten. Disabled stays disabled.
func Repoint() (bool, error) {
	cur, err := runCommand()
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Run key: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return false, fmt.Errorf("finding this program: %w", err)
	}
	if cur == runLine(exe) {
		return false, nil
	}
	return true, Set(true)
}
