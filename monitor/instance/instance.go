// Package instance keeps GPU Canary to one of each: one tray per user
// session, and one engine per state folder.
//
// Claim is the tray's: the first start owns a name (the session bus name
// on Linux, a named mutex on Windows) and is told, through Primary.Raise,
// when a later start wants its window; the later start signals it and
// ends. Quit asks that first start to quit through the same channel
// (Primary.Quit), and waits until it has let the name go: `gpucanary
// quit`, which the Windows installer runs before it replaces the tray's
// files. LockState is every engine's: a lock file in the state folder
// (flock on Unix, LockFileEx on Windows) held while the engine runs, so
// `watch` refuses to write the folder a running tray writes, and says who
// holds it. Both locks go with the process, however it ends.
//
// A state folder, or a lock file in it, that another user could have
// written is not locked (owned.Check): the error wraps *owned.Untrusted,
// and the caller runs without the folder.
//
// It imports only the standard library, x/sys, godbus and monitor/owned.
package instance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/owned"
)

// ErrRunning is returned by Claim when another start of GPU Canary holds
// the session: it was asked to show its window (Signalled says whether it
// could be).
var ErrRunning = errors.New("GPU Canary is already running")

// Running is Claim's error when another start holds the session.
type Running struct {
	// Signalled is true when the other start was asked to show its
	// Environments window; false when it could not be reached (no session
	// bus: the lock in the state folder says only that it runs).
	Signalled bool
	// PID is the other start's process, when known.
	PID int
}

func (r *Running) Error() string {
	s := "GPU Canary is already running"
	if r.PID > 0 {
		s += fmt.Sprintf(" (PID %d)", r.PID)
	}
	if r.Signalled {
		return s + "; its Environments window was brought up"
	}
	return s
}

func (r *Running) Is(target error) bool { return target == ErrRunning }

// Primary is the one tray of the session.
type Primary struct {
	// Raise receives a value each time another start asks for the window.
	Raise <-chan struct{}
	// Quit receives a value when another process asks the tray to quit
	// (Quit: `gpucanary quit`, the installer before it replaces files).
	Quit  <-chan struct{}
	close func()
	once  sync.Once
}

// Close gives the session up; Raise and Quit are then closed.
func (p *Primary) Close() { p.once.Do(p.close) }

// ErrHeld is returned by LockState when another process holds the state
// folder (a *Held error says which).
var ErrHeld = errors.New("the state folder is in use")

// Held says which process holds a state folder.
type Held struct {
	Dir  string
	PID  int
	Role string // "tray", "watch", "agent", "ui"; "" when it did not say
}

func (h *Held) Error() string {
	who := "another GPU Canary process"
	if h.Role != "" {
		who = "GPU Canary's " + h.Role
	}
	if h.PID > 0 {
		who += fmt.Sprintf(" (PID %d)", h.PID)
	}
	return fmt.Sprintf("%s is already running with the state folder %s", who, h.Dir)
}

func (h *Held) Is(target error) bool { return target == ErrHeld }

// ErrNotLockFile is returned (wrapped) when the lock's path is a symlink,
// a FIFO, a folder or anything else but a regular file: it is not opened
// for writing.
var ErrNotLockFile = errors.New("not a regular file (a symlink or a special file is not followed)")

// StateLock is a held state folder; Release lets it go.
type StateLock struct {
	f *os.File
}

// lockName is the lock file in the state folder.
const lockName = "engine.lock"

// LockState takes the state folder dir for this process, which runs as
// role, or returns a *Held error naming the process that has it. The
// folder is created (0700) when missing. A folder or lock file another
// user could have written is refused with an error wrapping
// *owned.Untrusted: its lock says nothing, and what the engine would
// keep there would not be believed.
func LockState(dir, role string) (*StateLock, error) { return lockIn(dir, lockName, role) }

// lockIn takes the lock file name in dir for role.
func lockIn(dir, name, role string) (*StateLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the state folder %s: %w", dir, err)
	}
	if err := owned.Check(dir, owned.Policy{}); err != nil {
		return nil, fmt.Errorf("locking the state folder: %w", err)
	}
	p := filepath.Join(dir, name)
	// The lock file is truncated and written below: a symlink planted
	// there (by anyone who can write the folder) must not lead that write
	// to another file, which a root watch under sudo would clobber.
	f, err := openLockFile(p)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", p, err)
	}
	if err := owned.Check(p, owned.Policy{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the state folder: %w", err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	if !ok {
		h := &Held{Dir: dir}
		h.PID, h.Role = readOwner(f)
		f.Close()
		return nil, h
	}
	// Say who holds it, for the next one to tell.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" "+role+"\n"), 0)
	}
	return &StateLock{f: f}, nil
}

// Release lets the folder go.
func (l *StateLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}

// readOwner reads "PID role" from the lock file.
func readOwner(f *os.File) (int, string) {
	b := make([]byte, 128)
	n, _ := f.ReadAt(b, 0)
	fields := strings.Fields(string(b[:n]))
	if len(fields) == 0 {
		return 0, ""
	}
	pid, _ := strconv.Atoi(fields[0])
	role := ""
	if len(fields) > 1 {
		role = fields[1]
	}
	return pid, role
}

// trayLockName is the tray's lock in the state folder, where no session
// bus can say that a tray runs.
const trayLockName = "tray.lock"

// claimByLock claims the session with a lock file in stateDir: a later
// start learns that a tray runs (and its PID) but cannot reach it.
func claimByLock(stateDir string) (*Primary, error) {
	l, err := lockIn(stateDir, trayLockName, "tray")
	var held *Held
	if errors.As(err, &held) {
		return nil, &Running{PID: held.PID}
	}
	if err != nil {
		return nil, err
	}
	raise, quit := make(chan struct{}), make(chan struct{})
	return &Primary{Raise: raise, Quit: quit, close: func() { l.Release(); close(raise); close(quit) }}, nil
}

// NotQuit is Quit's error when a tray holds the session and has not let
// it go: it could not be asked (Asked false), or was asked and still
// runs when the wait ended.
type NotQuit struct {
	PID   int  // the tray's process, when known
	Asked bool // it was asked to quit
	Err   error
}

func (e *NotQuit) Error() string {
	who := "GPU Canary's tray"
	if e.PID > 0 {
		who += fmt.Sprintf(" (PID %d)", e.PID)
	}
	if e.Asked {
		return fmt.Sprintf("%s was asked to quit and still runs: %v", who, e.Err)
	}
	return fmt.Sprintf("%s runs but could not be asked to quit: %v", who, e.Err)
}

func (e *NotQuit) Unwrap() error { return e.Err }

// quitPoll is how often Quit looks whether the tray has let the session
// go (its name, or its mutex, gone).
const quitPoll = 50 * time.Millisecond

// waitGone polls held until it says false or ctx ends.
func waitGone(ctx context.Context, held func() bool) error {
	t := time.NewTicker(quitPoll)
	defer t.Stop()
	for held() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// quitByLock is Quit where no session bus can reach the tray: the lock in
// stateDir says whether one runs (and its PID), but it cannot be asked.
func quitByLock(stateDir string) (bool, error) {
	held, pid := lockHeld(stateDir, trayLockName)
	if !held {
		return false, nil
	}
	return true, &NotQuit{PID: pid, Err: errors.New("it holds no session bus name (it started without a session bus); quit it from its menu")}
}

// lockHeld says whether another open holds the lock file name in dir, and
// the PID written in it, without writing to it. An existing lock is taken
// for an instant: a tray starting at that very instant would believe
// another one runs.
func lockHeld(dir, name string) (bool, int) {
	if dir == "" {
		return false, 0
	}
	p := filepath.Join(dir, name)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return false, 0
	}
	f, err := openLockFile(p)
	if err != nil {
		return false, 0
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil {
		return false, 0
	}
	if ok {
		unlock(f)
		return false, 0
	}
	pid, _ := readOwner(f)
	return true, pid
}
