package link

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"
)

// Windows is the tray process's handle on the windows process: it starts
// one when a window is asked for, feeds it, and ends it when it says it is
// idle. Its methods are safe from any goroutine.
type Windows struct {
	// Command builds the command that starts a windows process; its stdin
	// and stdout are the link.
	Command func() *exec.Cmd
	// Hello is the snapshot a new windows process starts from.
	Hello func() Hello
	// Handle receives the windows process's requests (not Idle), on the
	// goroutine that reads them: it should hand them on and return, since
	// the process's end is not seen while it runs.
	Handle func(FromWindows)
	Log    *slog.Logger

	mu  sync.Mutex
	cur *child
}

// child is one running windows process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   chan ToWindows // to the writer goroutine
	// requests counts the requests sent, for Idle's race: a request sent
	// after the process said it was idle keeps it alive.
	requests int
	closed   bool
	done     chan struct{} // closed when the process has exited
}

// queueLen bounds the messages waiting for a slow windows process; state
// updates beyond it are dropped (the next one carries the same news).
const queueLen = 64

// Open asks the windows process to do r, starting one when none runs.
func (w *Windows) Open(r Request) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.cur; c != nil && !c.closed {
		select {
		case c.out <- ToWindows{Request: &r}:
			c.requests++
			return nil
		default:
			// Not reading for queueLen messages: it hangs. Start afresh.
			w.log().Warn("the windows process does not read its messages; restarting it", "pid", c.cmd.Process.Pid)
			w.closeLocked(c)
			_ = c.cmd.Process.Kill()
		}
	}
	c, err := w.start()
	if err != nil {
		return err
	}
	c.out <- ToWindows{Request: &r}
	c.requests++
	return nil
}

// Send gives a running windows process m (a state or an event); with none
// running it does nothing, so an idle tray encodes nothing.
func (w *Windows) Send(m ToWindows) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.cur; c != nil && !c.closed {
		select {
		case c.out <- m:
		default:
		}
	}
}

// Running reports whether a windows process is running.
func (w *Windows) Running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur != nil && !w.cur.closed
}

// Grace periods of Close: how long the windows process has to end by
// itself (closing its windows, finishing a cancelled repair), then how
// long its reaping may take once killed.
var (
	closeGrace = 5 * time.Second
	reapGrace  = 2 * time.Second
)

// Close ends the windows process, if any, and waits for it, killing it
// after a grace period. It returns within both grace periods even when
// the process cannot be reaped (a Handle that never returns), so Quit
// always quits.
func (w *Windows) Close() {
	w.mu.Lock()
	c := w.cur
	if c != nil {
		w.closeLocked(c)
	}
	w.mu.Unlock()
	if c == nil {
		return
	}
	select {
	case <-c.done:
		return
	case <-time.After(closeGrace):
	}
	w.log().Warn("the windows process did not end; killing it", "pid", c.cmd.Process.Pid)
	_ = c.cmd.Process.Kill()
	select {
	case <-c.done:
	case <-time.After(reapGrace):
		w.log().Warn("the windows process was not reaped", "pid", c.cmd.Process.Pid)
	}
}

// closeLocked closes c's stdin: the windows process quits at its end.
func (w *Windows) closeLocked(c *child) {
	if !c.closed {
		c.closed = true
		close(c.out) // the writer closes stdin once the queue is drained
	}
	if w.cur == c {
		w.cur = nil
	}
}

func (w *Windows) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// start runs a new windows process and sends it the snapshot.
func (w *Windows) start() (*child, error) {
	cmd := w.Command()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the windows process: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the windows process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the windows process: %w", err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: make(chan ToWindows, queueLen), done: make(chan struct{})}
	hello := w.Hello()
	c.out <- ToWindows{Hello: &hello}
	w.cur = c
	w.log().Debug("windows process started", "pid", cmd.Process.Pid)
	go c.write(w.log())
	go w.read(c, stdout)
	return c, nil
}

// write encodes c's queue onto its stdin, then closes it.
func (c *child) write(log *slog.Logger) {
	defer c.stdin.Close()
	enc := json.NewEncoder(c.stdin)
	for m := range c.out {
		if err := enc.Encode(m); err != nil {
			if !errors.Is(err, io.ErrClosedPipe) {
				log.Debug("writing to the windows process", "err", err)
			}
			for range c.out { // drain: Open and Send never block on a dead process
			}
			return
		}
	}
}

// read handles c's requests until it exits, then reaps it.
func (w *Windows) read(c *child, stdout io.Reader) {
	dec := json.NewDecoder(stdout)
	for {
		var m FromWindows
		if err := dec.Decode(&m); err != nil {
			if !errors.Is(err, io.EOF) {
				// Something else wrote to the link: it cannot be read
				// any more, and the process would never hear Idle's
				// answer. End it; the next window starts a new one.
				w.log().Warn("reading from the windows process; ending it", "err", err)
				w.mu.Lock()
				w.closeLocked(c)
				w.mu.Unlock()
				_ = c.cmd.Process.Kill()
			}
			break
		}
		if m.Idle != nil {
			w.idle(c, m.Idle.Seen)
			continue
		}
		if w.Handle != nil {
			w.Handle(m)
		}
	}
	err := c.cmd.Wait()
	w.mu.Lock()
	w.closeLocked(c)
	w.mu.Unlock()
	close(c.done)
	if err != nil {
		w.log().Warn("the windows process ended", "err", err)
	} else {
		w.log().Debug("windows process ended", "pid", c.cmd.Process.Pid)
	}
}

// idle ends c when it has seen every request sent to it; otherwise a
// request is on its way and will open a window.
func (w *Windows) idle(c *child, seen int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if seen >= c.requests {
		w.closeLocked(c)
	}
}
