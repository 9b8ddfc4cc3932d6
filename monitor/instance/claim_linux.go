//go:build linux

package instance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// On Linux the tray owns a well-known name on the session bus; a later
// start calls Raise on its owner, `gpucanary quit` calls Quit. Without a
// session bus, a lock in the state folder stands in for the name.
const (
	BusName   = "io.github.gpucanary"
	busPath   = dbus.ObjectPath("/io/github/gpucanary")
	busIface  = "io.github.gpucanary.Instance"
	busMethod = busIface + ".Raise"
	busQuit   = busIface + ".Quit"
)

// busTimeout bounds the call to the first start.
var busTimeout = 5 * time.Second

// Claim makes this process the session's tray, or signals the one that
// is and returns a *Running error (errors.Is(err, ErrRunning)). stateDir
// holds the lock used when there is no session bus.
func Claim(stateDir string) (*Primary, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return claimByLock(stateDir)
	}
	reply, err := conn.RequestName(BusName, dbus.NameFlagDoNotQueue)
	if err != nil {
		conn.Close()
		return claimByLock(stateDir)
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
		defer cancel()
		r := &Running{}
		var pid uint32
		if conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, BusName).Store(&pid) == nil {
			r.PID = int(pid)
		}
		r.Signalled = conn.Object(BusName, busPath).CallWithContext(ctx, busMethod, 0).Err == nil
		return nil, r
	}
	s := &raiser{ch: make(chan struct{}, 1), quit: make(chan struct{}, 1)}
	if err := conn.Export(s, busPath, busIface); err != nil {
		conn.Close()
		return claimByLock(stateDir)
	}
	return &Primary{Raise: s.ch, Quit: s.quit, close: func() {
		conn.Close() // releases the name
		s.close()
	}}, nil
}

// raiser answers Raise and Quit on the bus.
type raiser struct {
	mu     sync.Mutex
	ch     chan struct{}
	quit   chan struct{}
	closed bool
}

// Raise is called by a later start; a request already waiting covers it.
func (s *raiser) Raise() *dbus.Error { s.send(s.ch); return nil }

// Quit is called by `gpucanary quit`, which then waits for the name to
// go.
func (s *raiser) Quit() *dbus.Error { s.send(s.quit); return nil }

func (s *raiser) send(ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (s *raiser) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
		close(s.quit)
	}
}

// Quit asks the session's tray to quit (Quit on the owner of BusName)
// and waits until the name has no owner, or ctx ends. It returns false
// and no error when no tray runs; true and no error once the tray has
// let the session go; a *NotQuit error when one runs and could not be
// asked (it started without a session bus, and only its lock in stateDir
// says it runs; or it is a GPU Canary without Quit) or still runs when
// ctx ends.
func Quit(ctx context.Context, stateDir string) (bool, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return quitByLock(stateDir)
	}
	defer conn.Close()
	bus := conn.BusObject()
	owned := func() (bool, error) {
		var has bool
		err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, BusName).Store(&has)
		return has, err
	}
	has, err := owned()
	if err != nil {
		return false, fmt.Errorf("asking the session bus whether GPU Canary runs: %w", err)
	}
	if !has {
		return quitByLock(stateDir)
	}
	var pid uint32
	_ = bus.CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, BusName).Store(&pid)
	if err := conn.Object(BusName, busPath).CallWithContext(ctx, busQuit, 0).Err; err != nil {
		var de dbus.Error
		switch {
		case errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.NoReply":
			// It left the bus before its answer went out: quitting, as
			// asked. The wait below says whether it is gone.
		case errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.UnknownMethod":
			return true, &NotQuit{PID: int(pid), Err: fmt.Errorf("it has no Quit (a GPU Canary older than this one): %w", err)}
		default:
			return true, &NotQuit{PID: int(pid), Err: err}
		}
	}
	// A bus that stops answering leaves the name held until ctx ends.
	if err := waitGone(ctx, func() bool { has, err := owned(); return has || err != nil }); err != nil {
		return true, &NotQuit{PID: int(pid), Asked: true, Err: err}
	}
	return true, nil
}
