package tray

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"golang.design/x/clipboard"
)

// The tray process owns the clipboard: on X11 a copied text lives only as
// long as the process that copied it, and this is the process that stays.
var (
	clipOnce sync.Once
	clipErr  error
)

// copyText puts text on the clipboard: X11 (also under XWayland) and
// Windows through golang.design/x/clipboard, a Wayland-only session
// through wl-copy.
func copyText(text string) error {
	clipOnce.Do(func() { clipErr = clipboard.Init() })
	if clipErr == nil {
		clipboard.Write(clipboard.FmtText, []byte(text))
		return nil
	}
	if os.Getenv("WAYLAND_DISPLAY") != "" {
		if path, err := exec.LookPath("wl-copy"); err == nil {
			cmd := exec.Command(path)
			cmd.Stdin = strings.NewReader(text)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("copying with wl-copy: %w: %s", err, strings.TrimSpace(string(out)))
			}
			return nil
		}
	}
	return errors.Join(fmt.Errorf("no clipboard: %w", clipErr), errNoWlCopy())
}

func errNoWlCopy() error {
	if os.Getenv("WAYLAND_DISPLAY") != "" {
		return errors.New("wl-copy (package wl-clipboard) is not installed")
	}
	return nil
}
