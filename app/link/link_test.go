package link

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestMain turns the test binary into a stand-in windows process when
// asked: it dials the link on its stdin and stdout, answers "echo" with
// what it knows (through Copy) and "idle" with Idle, and exits when the
// tray closes the link.
func TestMain(m *testing.M) {
	if os.Getenv("GPUCANARY_LINK_CHILD") == "1" {
		os.Exit(fakeWindows())
	}
	os.Exit(m.Run())
}

// dial is Start that waits for the snapshot and returns the error of
// one that cannot be read.
func dial(r io.Reader, w io.Writer) (*Tray, error) {
	t := Start(r, w)
	<-t.ready
	if t.helloErr != nil {
		return nil, t.helloErr
	}
	return t, nil
}

func fakeWindows() int {
	t, err := dial(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	events, _ := t.Subscribe()
	handled := 0
	for r := range t.Requests() {
		handled++
		switch r.Show {
		case "echo":
			s := t.State()
			t.Copy(fmt.Sprintf("pid=%d envs=%d history=%d samples=%d", os.Getpid(), len(s.Envs), len(t.History(HistoryKeep)), len(t.Samples().GPUs["GPU-0"].Recent)))
		case "event":
			select {
			case e := <-events:
				t.Copy("event " + string(e.Kind))
			case <-time.After(5 * time.Second):
				t.Copy("no event")
			}
		case "idle":
			t.Idle(handled)
		}
		if r.Repair != "" {
			t.Add(r.Repair)
		}
	}
	if err := t.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// tray is a Windows over the stand-in, collecting what it says.
type tray struct {
	*Windows
	got chan FromWindows
}

func newTray(t *testing.T, envs int) *tray {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tr := &tray{got: make(chan FromWindows, 16)}
	tr.Windows = &Windows{
		Command: func() *exec.Cmd {
			c := exec.Command(exe)
			c.Env = append(os.Environ(), "GPUCANARY_LINK_CHILD=1")
			c.Stderr = os.Stderr
			return c
		},
		Hello: func() Hello {
			h := Hello{State: monitor.State{Started: true}, History: []monitor.Event{{Kind: monitor.KindEnvAdded}}}
			for i := 0; i < envs; i++ {
				h.State.Envs = append(h.State.Envs, monitor.EnvReport{Env: &pyenv.Env{Path: fmt.Sprint("/env", i)}})
			}
			h.Samples.GPUs = map[string]*present.DeviceSamples{"GPU-0": {Recent: []present.GPUSample{{Util: 50}, {Util: 60}, {Util: 70}}}}
			return h
		},
		Handle: func(m FromWindows) { tr.got <- m },
	}
	t.Cleanup(tr.Close)
	return tr
}

func (tr *tray) next(t *testing.T) FromWindows {
	t.Helper()
	select {
	case m := <-tr.got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("the windows process said nothing in 10s")
		return FromWindows{}
	}
}

func (tr *tray) ask(t *testing.T, show string) string {
	t.Helper()
	if err := tr.Open(Request{Show: show}); err != nil {
		t.Fatal(err)
	}
	return tr.next(t).Copy
}

func waitUntil(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWindowsProcessLifecycle: the first window starts a process that gets
// the snapshot, state and events follow it live, its requests reach the
// tray, "idle" ends it, and the next window starts a fresh one.
func TestWindowsProcessLifecycle(t *testing.T) {
	tr := newTray(t, 2)
	if tr.Running() {
		t.Fatal("a windows process runs before any window was asked for")
	}
	tr.Send(ToWindows{State: &monitor.State{}}) // nothing runs: dropped, not queued
	first := tr.ask(t, "echo")
	if !strings.Contains(first, "envs=2 history=1 samples=3") {
		t.Fatalf("snapshot seen by the windows process: %q", first)
	}
	tr.Send(ToWindows{State: &monitor.State{Envs: make([]monitor.EnvReport, 5)}})
	tr.Send(ToWindows{Event: &monitor.Event{Kind: monitor.KindCUDAWheelReplaced}})
	if got := tr.ask(t, "echo"); !strings.Contains(got, "envs=5 history=2") {
		t.Errorf("after a state and an event: %q", got)
	}
	tr.Send(ToWindows{Event: &monitor.Event{Kind: monitor.KindJobOnCPU}})
	if got := tr.ask(t, "event"); got != "event "+string(monitor.KindCUDAWheelReplaced) {
		// The subscription saw the first event, then the second queued.
		t.Errorf("subscription: %q", got)
	}
	if err := tr.Open(Request{Repair: "/env/x"}); err != nil {
		t.Fatal(err)
	}
	if m := tr.next(t); m.Add != "/env/x" {
		t.Errorf("request from the windows process: %+v", m)
	}
	if err := tr.Open(Request{Show: "idle"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the idle windows process is ended", func() bool { return !tr.Running() })

	second := tr.ask(t, "echo")
	if second == first || !strings.Contains(second, "envs=2") {
		t.Errorf("after idle, a new process with a new snapshot: first %q, second %q", first, second)
	}
}

// TestIdleRace: an Idle that crossed a request on its way keeps the
// process, so the window asked for still opens.
func TestIdleRace(t *testing.T) {
	tr := newTray(t, 1)
	tr.ask(t, "echo")
	tr.ask(t, "echo")
	tr.mu.Lock()
	c := tr.cur
	tr.mu.Unlock()
	tr.idle(c, 1) // said after one request, but two were sent
	if !tr.Running() {
		t.Fatal("an Idle older than the last request ended the process")
	}
	tr.idle(c, 2)
	if tr.Running() {
		t.Fatal("an Idle after every request did not end the process")
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the windows process did not exit when its link closed")
	}
}

// TestCloseEndsTheProcess is Quit: the windows process goes with the tray.
func TestCloseEndsTheProcess(t *testing.T) {
	tr := newTray(t, 1)
	tr.ask(t, "echo")
	tr.mu.Lock()
	c := tr.cur
	tr.mu.Unlock()
	tr.Close()
	select {
	case <-c.done:
	default:
		t.Fatal("Close returned before the process exited")
	}
	if c.cmd.ProcessState == nil || !c.cmd.ProcessState.Success() {
		t.Errorf("windows process state after Close: %v", c.cmd.ProcessState)
	}
}

// TestDialRefusesGarbage: a windows process started by hand, or fed
// something else, says what is wrong instead of showing empty windows.
func TestDialRefusesGarbage(t *testing.T) {
	for _, in := range []string{"", "not json", `{"state":{}}`} {
		_, err := dial(strings.NewReader(in), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "snapshot") {
			t.Errorf("dial(%q) = %v", in, err)
		}
	}
	// A broken message after the snapshot ends the link with an error.
	tr, err := dial(strings.NewReader(`{"hello":{"state":{"started":true}}}{"state":`), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for range tr.Requests() {
	}
	if tr.Err() == nil || !tr.State().Started {
		t.Errorf("after a cut message: err %v, started %v", tr.Err(), tr.State().Started)
	}
}

// TestGarbageOnTheLinkEndsTheProcess: a windows process whose stdout
// carries something other than the link (a library printing there) can
// no longer be heard, not even its Idle: it is ended, not left running.
func TestGarbageOnTheLinkEndsTheProcess(t *testing.T) {
	started := make(chan *exec.Cmd, 1)
	w := &Windows{
		Command: func() *exec.Cmd {
			// exec: the process that must be ended is the one holding the
			// link, and it never reads stdin, so closing it ends nothing.
			cmd := exec.Command("sh", "-c", `printf 'Gtk-Message: not JSON\n'; exec sleep 60`)
			started <- cmd
			return cmd
		},
		Hello: func() Hello { return Hello{} },
	}
	t.Cleanup(w.Close)
	if err := w.Open(Request{Show: ShowEnvs}); err != nil {
		t.Fatal(err)
	}
	proc := (<-started).Process
	deadline := time.Now().Add(10 * time.Second)
	// ErrProcessDone: ended and reaped.
	for w.Running() || !errors.Is(proc.Signal(syscall.Signal(0)), os.ErrProcessDone) {
		if time.Now().After(deadline) {
			t.Fatalf("the windows process (PID %d) is still there 10s after garbage on the link", proc.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseReturnsWhenHandleHangs: a request handler that never returns
// keeps the process from being reaped; Close still returns after its
// grace periods, so Quit quits.
func TestCloseReturnsWhenHandleHangs(t *testing.T) {
	closeGrace, reapGrace = 200*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { closeGrace, reapGrace = 5*time.Second, 2*time.Second })
	tr := newTray(t, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	handling := make(chan struct{}, 1)
	tr.Handle = func(FromWindows) {
		handling <- struct{}{}
		<-release
	}
	if err := tr.Open(Request{Show: "echo"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-handling:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached Handle")
	}
	closed := make(chan struct{})
	go func() { tr.Windows.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a hanging Handle")
	}
}

// TestRecordedTellsTheTray: a repair's journal written in the windows
// process is told to the tray process, whose engine reads it at once.
func TestRecordedTellsTheTray(t *testing.T) {
	var hello bytes.Buffer
	if err := json.NewEncoder(&hello).Encode(ToWindows{Hello: &Hello{}}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tr, err := dial(&hello, &out)
	if err != nil {
		t.Fatal(err)
	}
	tr.Recorded("/state/journal/20250301T120000.000Z-proj-.venv.jsonl")
	var m FromWindows
	if err := json.NewDecoder(&out).Decode(&m); err != nil || m.Journal != "/state/journal/20250301T120000.000Z-proj-.venv.jsonl" {
		t.Errorf("sent %+v, %v", m, err)
	}
}
