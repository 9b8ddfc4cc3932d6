//go:build linux

package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// openFolder shows path in the file manager.
func openFolder(path string) error {
	return exec.Command("xdg-open", path).Start()
}

// terminate asks a process to stop.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// setTooltip sets the StatusNotifierItem's tooltip (Fyne's tray API has
// none; its systray package does).
func setTooltip(s string) { systray.SetTooltip(s) }

// autostartPath is the XDG autostart entry.
func autostartPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the autostart folder: %w", err)
	}
	return filepath.Join(dir, "autostart", "io.github.gpucanary.desktop"), nil
}

func autostartEnabled() bool {
	p, err := autostartPath()
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// setAutostart writes or removes the XDG autostart .desktop entry.
func setAutostart(on bool) error {
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
	entry := fmt.Sprintf("[Desktop Entry]\nType=Application\nName=GPU Canary\nComment=Keeps your PyTorch GPU environments honest\nExec=%q\nIcon=io.github.gpucanary\nX-GNOME-Autostart-enabled=true\nTerminal=false\n", exe)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	return os.WriteFile(p, []byte(entry), 0o644)
}

// trayHostMissing reports whether no StatusNotifierWatcher is on the
// session bus: then the tray icon cannot appear, and the app opens a
// window instead of running invisibly.
func trayHostMissing() bool {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return true
	}
	defer conn.Close()
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has); err != nil {
		return false // cannot tell: assume a tray
	}
	return !has
}
