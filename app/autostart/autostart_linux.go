//go:build linux

package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Start at login on Linux is an XDG autostart entry
// (https://specifications.freedesktop.org/autostart-spec/latest/):
// $XDG_CONFIG_HOME/autostart/ID.desktop, which every XDG desktop runs at
// login.

// autostartPath is the XDG autostart entry.
func autostartPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the autostart folder: %w", err)
	}
	return filepath.Join(dir, "autostart", "io.github.gpucanary.desktop"), nil
}

func Enabled() bool {
	p, err := autostartPath()
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// Set writes or removes the XDG autostart .desktop entry.
func Set(on bool) error {
	p, err := autostartPath()
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", p, err)
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program: %w", err)
	}
	entry := desktopEntry(exe)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	if err := os.WriteFile(p, []byte(entry), 0o644); err != nil {
		return fmt.Errorf("writing the autostart entry %s: %w", p, err)
	}
	return nil
}

// desktopEntry is the autostart entry that starts exe.
func desktopEntry(exe string) string {
	return "[Desktop Entry]\nType=Application\nName=GPU Canary\nComment=Keeps your PyTorch GPU environments honest\n" +
		"Exec=" + desktopQuote(exe) + "\nIcon=" + appID + "\nX-GNOME-Autostart-enabled=true\nTerminal=false\n"
}

// desktopQuote quotes an Exec argument as the Desktop Entry spec says:
// in double quotes, with ", `, $ and \ escaped by a backslash, and every
// backslash doubled again for the string-value escape; a literal % is %%.
func desktopQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\\\`, `"`, `\\"`, "`", "\\\\`", `$`, `\\$`, `%`, `%%`)
	return `"` + r.Replace(s) + `"`
}

// Repoint leaves the XDG entry as it is: on Linux GPU Canary is installed
// in a fixed place (a package, make install), and a copy started from a
// checkout must not take the login over.
func Repoint() (bool, error) { return false, nil }
