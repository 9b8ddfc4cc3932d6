//go:build windows

package instance

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"strings"

	"golang.org/x/sys/windows"
)

// On Windows the tray holds a named mutex in the session's namespace
// (Local\GPUCanary-USER); a later start finds it exists and sets the
// first one's named event (the mutex's name with -raise), which the first
// one waits on. `gpucanary quit` sets a second event (-quit) and waits
// until the mutex is gone.

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
	quitName, _ := windows.UTF16PtrFromString(name + "-quit")
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
	quitEv, err := windows.CreateEvent(nil, 0, 0, quitName) // auto-reset
	if err != nil {
		windows.CloseHandle(ev)
		windows.CloseHandle(m)
		return nil, fmt.Errorf("creating the event %s-quit: %w", name, err)
	}
	stop, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(quitEv)
		windows.CloseHandle(ev)
		windows.CloseHandle(m)
		return nil, fmt.Errorf("creating an event: %w", err)
	}
	raise := make(chan struct{}, 1)
	quit := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(raise)
		defer close(quit)
		for {
			r, err := windows.WaitForMultipleObjects([]windows.Handle{ev, quitEv, stop}, false, windows.INFINITE)
			if err != nil {
				return
			}
			var ch chan struct{}
			switch r {
			case windows.WAIT_OBJECT_0:
				ch = raise
			case windows.WAIT_OBJECT_0 + 1:
				ch = quit
			default:
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return &Primary{Raise: raise, Quit: quit, close: func() {
		windows.SetEvent(stop)
		<-done
		windows.CloseHandle(stop)
		windows.CloseHandle(quitEv)
		windows.CloseHandle(ev)
		windows.CloseHandle(m)
	}}, nil
}

// Quit asks the session's tray to quit (its -quit event) and waits until
// its mutex is gone, or ctx ends. It returns false and no error when no
// tray runs; true and no error once the tray has let the session go; a
// *NotQuit error when one runs and could not be asked (a GPU Canary
// older than this one has no -quit event) or still runs when ctx ends.
// stateDir is unused on Windows. The tray's PID is not known here.
func Quit(ctx context.Context, stateDir string) (bool, error) {
	name := ObjectName()
	if !mutexExists(name) {
		return false, nil
	}
	quitName, _ := windows.UTF16PtrFromString(name + "-quit")
	ev, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, quitName)
	if err != nil {
		return true, &NotQuit{Err: fmt.Errorf("opening its event %s-quit (a GPU Canary older than this one has none): %w", name, err)}
	}
	err = windows.SetEvent(ev)
	windows.CloseHandle(ev)
	if err != nil {
		return true, &NotQuit{Err: fmt.Errorf("setting its event %s-quit: %w", name, err)}
	}
	if err := waitGone(ctx, func() bool { return mutexExists(name) }); err != nil {
		return true, &NotQuit{Asked: true, Err: err}
	}
	return true, nil
}

// mutexExists says whether a tray holds the mutex name. The handle opened
// to look is closed at once: while open, it would keep the mutex alive.
func mutexExists(name string) bool {
	p, _ := windows.UTF16PtrFromString(name)
	h, err := windows.OpenMutex(windows.SYNCHRONIZE, false, p)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return false
	}
	if err == nil {
		windows.CloseHandle(h)
	}
	// Any other refusal (access denied) still says it exists.
	return true
}
