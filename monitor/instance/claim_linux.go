//go:build linux

package instance

import (
	"context"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// On Linux the tray owns a well-known name on the session bus; a later
// start calls Raise on its owner. Without a session bus, a lock in the
// state folder stands in for the name.
const (
	BusName   = "io.github.gpucanary"
	busPath   = dbus.ObjectPath("/io/github/gpucanary")
	busIface  = "io.github.gpucanary.Instance"
	busMethod = busIface + ".Raise"
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
	s := &raiser{ch: make(chan struct{}, 1)}
	if err := conn.Export(s, busPath, busIface); err != nil {
		conn.Close()
		return claimByLock(stateDir)
	}
	return &Primary{Raise: s.ch, close: func() {
		conn.Close() // releases the name
		s.close()
	}}, nil
}

// raiser answers Raise on the bus.
type raiser struct {
	mu     sync.Mutex
	ch     chan struct{}
	closed bool
}

// Raise is called by a later start; a request already waiting covers it.
func (s *raiser) Raise() *dbus.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

func (s *raiser) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}
