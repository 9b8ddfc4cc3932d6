//go:build windows

package instance

import (
	"errors"
	"fmt"
	"os/user"
	"strings"

	"golang.org/x/sys/windows"
)

// On Windows the tray holds a named mutex in the session's namespace
// (Local\GPUCanary-USER); a later start finds it exists and sets the
// first one's named event (the mutex's name with -raise), which the first
// one waits on.

// ObjectName is the mutex's name for this user.
func ObjectName() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	// Only the namespace's own backslash may appear in the name.
	return `Local\GPUCanary-` + strings.NewReplacer(`\`, "-", "/", "-").Replace(name)
}

// Claim makes this process the session's tray, or signals the one that
// is and returns a *Running error (errors.Is(err, ErrRunning)). stateDir
// is unused on Windows: the session's namespace always exists.
func Claim(stateDir string) (*Primary, error) {
	name := ObjectName()
	mutexName, _ := windows.UTF16PtrFromString(name)
	eventName, _ := windows.UTF16PtrFromString(name + "-raise")
	m, err := windows.CreateMutex(nil, false, mutexName)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		windows.CloseHandle(m)
		r := &Running{}
		if ev, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, eventName); err == nil {
			r.Signalled = windows.SetEvent(ev) == nil
			windows.CloseHandle(ev)
		}
		return nil, r
	}
	if err != nil {
		return nil, fmt.Errorf("creating the mutex %s: %w", name, err)
	}
	ev, err := windows.CreateEvent(nil, 0, 0, eventName) // auto-reset
	if err != nil {
		windows.CloseHandle(m)
		return nil, fmt.Errorf("creating the event %s-raise: %w", name, err)
	}
	stop, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(ev)
		windows.CloseHandle(m)
		return nil, fmt.Errorf("creating an event: %w", err)
	}
	raise := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(raise)
		for {
			r, err := windows.WaitForMultipleObjects([]windows.Handle{ev, stop}, false, windows.INFINITE)
			if err != nil || r != windows.WAIT_OBJECT_0 {
				return
			}
			select {
			case raise <- struct{}{}:
			default:
			}
		}
	}()
	return &Primary{Raise: raise, close: func() {
		windows.SetEvent(stop)
		<-done
		windows.CloseHandle(stop)
		windows.CloseHandle(ev)
		windows.CloseHandle(m)
	}}, nil
}
