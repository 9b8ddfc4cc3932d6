package link

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
)

// HistoryKeep is how many of the engine's newest events the hello
// carries and the windows hold: the History window's list, read from the
// end of the engine's log (a longer history is not sent whole).
const HistoryKeep = 1000

// Tray is the windows process's side of the link. It has the engine's
// methods the windows use (State, History, Subscribe, Add, Forget), so the
// windows cannot tell it from the engine itself.
type Tray struct {
	mu      sync.Mutex
	state   monitor.State
	history []monitor.Event // newest first
	samples present.GPUSamples
	subs    map[int]chan monitor.Event
	next    int

	enc      *json.Encoder
	encMu    sync.Mutex
	requests chan Request
	done     chan struct{}
	err      error
	// ready is closed once the snapshot is read, or reading it failed
	// (helloErr, set before).
	ready    chan struct{}
	helloErr error
}

// Start reads the tray process's snapshot from r and then the rest;
// requests go to w. Requests() is closed when r ends. It does not wait:
// the snapshot is read on the goroutine that reads the rest, while the
// windows process starts its toolkit (the snapshot of a thousand
// environments is some 5 MB of JSON, a tenth of a second to decode).
// State, History and Samples wait for it. A snapshot that cannot be read
// ends the link: Requests is closed and Err says why.
func Start(r io.Reader, w io.Writer) *Tray {
	t := &Tray{subs: map[int]chan monitor.Event{}, enc: json.NewEncoder(w), requests: make(chan Request, queueLen),
		done: make(chan struct{}), ready: make(chan struct{})}
	go t.read(json.NewDecoder(r))
	return t
}

// hello reads the snapshot, the first message.
func (t *Tray) hello(dec *json.Decoder) error {
	var first ToWindows
	if err := dec.Decode(&first); err != nil {
		return fmt.Errorf("reading the tray process's snapshot: %w", err)
	}
	if first.Hello == nil {
		return errors.New("reading the tray process's snapshot: the first message is not a hello")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state, t.history, t.samples = first.Hello.State, first.Hello.History, first.Hello.Samples
	return nil
}

func (t *Tray) read(dec *json.Decoder) {
	err := t.hello(dec)
	if err != nil {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
		t.helloErr = err
	}
	close(t.ready)
	defer func() {
		t.mu.Lock()
		for id, c := range t.subs {
			close(c)
			delete(t.subs, id)
		}
		t.mu.Unlock()
		close(t.requests)
		close(t.done)
	}()
	if err != nil {
		return
	}
	for {
		var m ToWindows
		if err := dec.Decode(&m); err != nil {
			if !errors.Is(err, io.EOF) {
				t.mu.Lock()
				t.err = fmt.Errorf("reading from the tray process: %w", err)
				t.mu.Unlock()
			}
			return
		}
		switch {
		case m.State != nil:
			t.mu.Lock()
			envs := t.state.Envs
			t.state = *m.State
			if m.EnvsSame {
				t.state.Envs = envs
			}
			t.mu.Unlock()
		case m.Event != nil:
			t.mu.Lock()
			t.history = append([]monitor.Event{*m.Event}, t.history[:min(len(t.history), HistoryKeep-1)]...)
			for _, c := range t.subs {
				select {
				case c <- *m.Event:
				default: // a subscriber 1024 events behind loses events, as the engine's do
				}
			}
			t.mu.Unlock()
		case m.Request != nil:
			t.requests <- *m.Request
		}
	}
}

// Requests are the windows the tray asks for; closed when the tray
// process closes the link (it quit, or agreed that this process is idle).
func (t *Tray) Requests() <-chan Request { return t.requests }

// Err is why reading stopped, nil at a clean end.
func (t *Tray) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// State is the engine's state as last sent.
func (t *Tray) State() monitor.State {
	<-t.ready
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state.Clone()
}

// History is the engine's newest events as the hello carried them and
// the events since, at most limit, newest first.
func (t *Tray) History(limit int) []monitor.Event {
	<-t.ready
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.history[:min(max(limit, 0), len(t.history))])
}

// Samples are the GPU graphs' points the tray had collected.
func (t *Tray) Samples() present.GPUSamples {
	<-t.ready
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.samples.Clone()
}

// Subscribe returns the events from now on, like Monitor.Subscribe.
func (t *Tray) Subscribe() (<-chan monitor.Event, func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := make(chan monitor.Event, 1024)
	select {
	case <-t.done:
		close(c)
		return c, func() {}
	default:
	}
	id := t.next
	t.next++
	t.subs[id] = c
	return c, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if c, ok := t.subs[id]; ok {
			delete(t.subs, id)
			close(c)
		}
	}
}

// Add asks the engine to watch the environment at path.
func (t *Tray) Add(path string) error { return t.send(FromWindows{Add: path}) }

// Forget asks the engine to stop watching the environment at path.
func (t *Tray) Forget(path string) error { return t.send(FromWindows{Forget: path}) }

// WatchEnd asks the engine to tell of the process's end whatever its run
// time (engine.Monitor.WatchEnd); the tray process logs a refusal.
func (t *Tray) WatchEnd(pid int, start time.Time) error {
	return t.send(FromWindows{WatchEnd: &WatchEnd{PID: pid, Start: start}})
}

// QuietJob asks the engine to tell nothing more of the process's job
// until it ends (engine.Monitor.QuietJob); the tray process logs a
// refusal.
func (t *Tray) QuietJob(pid int, start time.Time) error {
	return t.send(FromWindows{QuietJob: &WatchEnd{PID: pid, Start: start}})
}

// ReportJob asks the tray process to write what happened to the job
// pid (`gpucanary report --job`) into a new folder and open it.
func (t *Tray) ReportJob(pid int) error { return t.send(FromWindows{ReportJob: pid}) }

// Recorded tells the tray process that a repair's journal has recorded
// a start or an end, so its engine reads it now (fix.Service.Recorded).
func (t *Tray) Recorded(journal string) { _ = t.send(FromWindows{Journal: journal}) }

// Copy puts text on the clipboard, owned by the tray process.
func (t *Tray) Copy(text string) { _ = t.send(FromWindows{Copy: text}) }

// Idle says that no window is open any more, after handling handled
// requests: the tray ends this process unless it has sent more since.
func (t *Tray) Idle(handled int) { _ = t.send(FromWindows{Idle: &Idle{Seen: handled}}) }

// send writes m to the tray process; an error means it is gone. Callers
// that cannot do anything about that drop the error: the windows process
// ends when its stdin does.
func (t *Tray) send(m FromWindows) error {
	t.encMu.Lock()
	defer t.encMu.Unlock()
	if err := t.enc.Encode(m); err != nil {
		return fmt.Errorf("telling the tray process: %w", err)
	}
	return nil
}
