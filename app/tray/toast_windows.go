//go:build windows

package tray

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"git.sr.ht/~jackmordaunt/go-toast/v2/wintoast"
	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// toastSetup registers GPU Canary's toasts once per process (on the first
// notification): the icon file beside the state, the registry values of
// toastRegistration, then go-toast's own record of them.
var toastSetup = sync.OnceValue(func() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program for its notifications: %w", err)
	}
	icon, err := writeToastIcon()
	if err != nil {
		return err
	}
	if err := writeRegistry(toastRegistration(exe, icon)); err != nil {
		return err
	}
	// The process's own ID ties its toasts and its taskbar entry to the
	// registration (an unpackaged process has none otherwise).
	if err := setProcessAppID.Find(); err == nil {
		id, _ := windows.UTF16PtrFromString(toastAppID)
		setProcessAppID.Call(uintptr(unsafe.Pointer(id)))
	}
	return wintoast.SetAppData(wintoast.AppData{AppID: toastAppID, GUID: toastActivator, ActivationExe: `"` + exe + `"`, IconPath: icon})
})

var setProcessAppID = windows.NewLazySystemDLL("shell32.dll").NewProc("SetCurrentProcessExplicitAppUserModelID")

// writeToastIcon writes GPU Canary's icon where the registration points
// (IconUri must name a file), in the state folder.
func writeToastIcon() (string, error) {
	dir, err := store.Dir()
	if err != nil {
		return "", fmt.Errorf("finding a folder for the notification icon: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	p := filepath.Join(dir, "icon.png")
	if err := os.WriteFile(p, assets.AppIcon, 0o600); err != nil {
		return "", fmt.Errorf("writing the notification icon %s: %w", p, err)
	}
	return p, nil
}

// writeRegistry sets each value under HKEY_CURRENT_USER, creating its key,
// and rewrites one that differs: after the program moved, the activator
// and the icon point at where it is now.
func writeRegistry(values []regValue) error {
	var errs []error
	for _, v := range values {
		k, _, err := registry.CreateKey(registry.CURRENT_USER, v.Key, registry.QUERY_VALUE|registry.SET_VALUE)
		if err != nil {
			errs = append(errs, fmt.Errorf("registering notifications: opening HKCU\\%s: %w", v.Key, err))
			continue
		}
		if old, _, err := k.GetStringValue(v.Name); err != nil || old != v.Value {
			if err := k.SetStringValue(v.Name, v.Value); err != nil {
				errs = append(errs, fmt.Errorf("registering notifications: setting HKCU\\%s %q: %w", v.Key, v.Name, err))
			}
		}
		k.Close()
	}
	return errors.Join(errs...)
}

// showNote shows n as a toast through the Windows Runtime (COM, no
// PowerShell: nothing is started, so no console window can flash).
func showNote(n present.Note) error {
	if err := toastSetup(); err != nil {
		return err
	}
	if !toastPlatform() {
		return errors.New("showing a notification: this Windows has no toast notifications (Windows.UI.Notifications is not registered)")
	}
	if err := wintoast.Push(toastAppID, toastXML(n)); err != nil {
		return fmt.Errorf("showing a notification: %w", err)
	}
	return nil
}

// toastPlatform reports whether Windows' toast classes are registered
// (Windows 8 and later; wine has none). Without them go-toast would start
// the Windows Runtime and register its activator only to fail, and that
// activator is then called back while the process exits.
func toastPlatform() bool {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Microsoft\WindowsRuntime\ActivatableClassId\Windows.UI.Notifications.ToastNotificationManager`, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	k.Close()
	return true
}

// notificationClicks delivers clicks on GPU Canary's toasts as the window
// to open. go-toast calls back on a thread of its own; a click that finds
// the channel full is dropped (the tray is busy opening one already).
func notificationClicks(log *slog.Logger) <-chan link.Request {
	clicks := make(chan link.Request, 4)
	wintoast.SetActivationCallback(func(_, args string, _ []wintoast.UserData) {
		r, ok := toastRequest(args)
		if !ok {
			log.Warn("a notification was clicked with arguments that are not GPU Canary's", "args", args)
			return
		}
		select {
		case clicks <- r:
		default:
		}
	})
	return clicks
}
