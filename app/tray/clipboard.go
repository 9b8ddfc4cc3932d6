package tray

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

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
			return wlCopy(path, text)
		}
	}
	return errors.Join(fmt.Errorf("no clipboard: %w", clipErr), errNoWlCopy())
}

// wlCopyTimeout bounds one wl-copy run: it only has to read the text.
const wlCopyTimeout = 5 * time.Second

// wlCopy runs the wl-copy at path with text on its stdin. wl-copy forks a
// process that serves the selection and keeps the descriptors it was
// given, so its stderr goes to a file, not a pipe: waiting for a pipe's
// end would wait for the next copy.
func wlCopy(path, text string) error {
	errFile, err := os.CreateTemp("", "gpucanary-wl-copy-*")
	if err != nil {
		return fmt.Errorf("copying with wl-copy: %w", err)
	}
	defer os.Remove(errFile.Name())
	defer errFile.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wlCopyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = strings.NewReader(text)
	cmd.Stderr = errFile
	cmd.WaitDelay = time.Second // for stdin's copy, should it never be read
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		msg, _ := os.ReadFile(errFile.Name())
		return fmt.Errorf("copying with wl-copy: %w: %s", err, strings.TrimSpace(string(msg)))
	}
	return nil
}

func errNoWlCopy() error {
	if os.Getenv("WAYLAND_DISPLAY") != "" {
		return errors.New("wl-copy (package wl-clipboard) is not installed")
	}
	return nil
}
