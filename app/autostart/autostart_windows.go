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

// Enabled reports whether GPU Canary starts at login: the user's Run
// value, or the machine's, which a per-machine install with AUTOSTART=1
// writes in HKLM's Run key (every account's sign-in).
func Enabled() bool {
	_, err := runCommand()
	return err == nil || machineEnabled()
}

// machineEnabled reports whether HKLM's Run key starts GPU Canary. The
// installer wrote it and removes it; the app only reads it, so that the
// Settings window neither adds a second start for the account nor claims
// to have turned it off.
func machineEnabled() bool {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, runKey, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	defer k.Close()
	_, _, err = k.GetStringValue(runValue)
	return err == nil
}

// errMachine is Set(false)'s answer while the machine's Run value starts
// GPU Canary at every account's sign-in.
var errMachine = errors.New("the machine's Run key starts GPU Canary at every account's sign-in (installed for every account with AUTOSTART=1): " +
	"only an administrator can turn that off, by uninstalling it or installing it again without AUTOSTART=1")

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

// Set adds or removes GPU Canary in the user's Run key. While the
// machine's Run value starts it, turning it on adds nothing (a second
// start at sign-in would only bring the window up), and turning it off
// removes the user's value and answers errMachine.
func Set(on bool) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("opening the Run key: %w", err)
	}
	defer k.Close()
	if !on {
		_ = k.DeleteValue(runValue)
		if machineEnabled() {
			return errMachine
		}
		return nil
	}
	if machineEnabled() {
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
