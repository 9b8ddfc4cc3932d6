package instance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The tests run this test binary again as the other GPU Canary process:
// INSTANCE_CHILD=lock (LockState) or claim (Claim) on INSTANCE_DIR. The
// child says "ready" once it holds what it took, "raised" for each Raise,
// and ends when its stdin closes. A claim child says "quit asked" when
// Quit asks it, and gives the session up and ends as the tray does;
// INSTANCE_CHILD=stubborn says it and keeps the session. (Outside these
// tests, test-windows' MSI check runs a claim child as the installed
// tray that the installer must stop.)
func TestMain(m *testing.M) {
	switch os.Getenv("INSTANCE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "lock":
		l, err := LockState(os.Getenv("INSTANCE_DIR"), "watch")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		l.Release()
	case "claim", "stubborn":
		p, err := Claim(os.Getenv("INSTANCE_DIR"))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		go func() {
			io.Copy(io.Discard, os.Stdin)
			p.Close()
		}()
		quit := p.Quit
		for {
			select {
			case _, ok := <-p.Raise:
				if !ok {
					os.Exit(0)
				}
				fmt.Println("raised")
			case _, ok := <-quit:
				if !ok {
					quit = nil
					continue
				}
				fmt.Println("quit asked")
				if os.Getenv("INSTANCE_CHILD") == "claim" {
					p.Close() // Raise closes: the loop ends
				}
			}
		}
	}
	os.Exit(0)
}

// child is the other process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startChild(t *testing.T, kind, dir string, env ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), "INSTANCE_CHILD="+kind, "INSTANCE_DIR="+dir), env...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { c.stop() })
	if got := c.next(t); got != "ready" {
		t.Fatalf("the other process says %q, want ready", got)
	}
	return c
}

// next is the child's next line; a child that says nothing in a minute
// has hung (a loaded machine answers in well under that).
func (c *child) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("the other process ended")
		}
		return l
	case <-time.After(time.Minute):
		t.Fatal("the other process said nothing in a minute")
	}
	return ""
}

// ended waits until the child has ended by itself (its output closed).
func (c *child) ended(t *testing.T) {
	t.Helper()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.cmd.Wait()
				c.stdin = nil
				return
			}
			t.Errorf("the other process says %q, want it to end", l)
		case <-time.After(time.Minute):
			t.Fatal("the other process did not end in a minute")
		}
	}
}

func (c *child) stop() {
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
		c.cmd.Wait()
	}
}

// TestLockStateRefusesASecondProcess: while one process holds the state
// folder, another is refused with who holds it; when the holder ends,
// even killed, the folder is free again.
func TestLockStateRefusesASecondProcess(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, "lock", dir)
	_, err := LockState(dir, "tray")
	var held *Held
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("LockState while another process holds it: %v, want a *Held", err)
	}
	if held.PID != c.cmd.Process.Pid || held.Role != "watch" || held.Dir != dir {
		t.Errorf("Held = %+v, want PID %d, role watch, dir %s", held, c.cmd.Process.Pid, dir)
	}
	if want := fmt.Sprintf("GPU Canary's watch (PID %d) is already running with the state folder %s", c.cmd.Process.Pid, dir); err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	c.cmd.Process.Kill()
	c.cmd.Wait()
	c.stdin = nil
	l, err := LockState(dir, "tray")
	if err != nil {
		t.Fatalf("LockState after the holder was killed: %v", err)
	}
	// A second open in this same process is refused too.
	if _, err := LockState(dir, "ui"); !errors.Is(err, ErrHeld) {
		t.Errorf("a second LockState in the holder's process: %v, want ErrHeld", err)
	}
	l.Release()
	l2, err := LockState(dir, "watch")
	if err != nil {
		t.Fatalf("LockState after Release: %v", err)
	}
	l2.Release()
}

// claimSecond claims in this process while the child is the first start,
// and checks what it is told.
func claimSecond(t *testing.T, c *child, dir string, signalled bool, pid int) {
	t.Helper()
	p, err := Claim(dir)
	if err == nil {
		p.Close()
		t.Fatal("a second Claim became the session's tray too")
	}
	var r *Running
	if !errors.As(err, &r) || !errors.Is(err, ErrRunning) {
		t.Fatalf("second Claim: %v, want a *Running", err)
	}
	if r.Signalled != signalled || r.PID != pid {
		t.Errorf("Running = %+v, want signalled %v, PID %d", r, signalled, pid)
	}
	if signalled {
		if got := c.next(t); got != "raised" {
			t.Errorf("the first start says %q, want raised", got)
		}
		if !strings.Contains(err.Error(), "its Environments window was brought up") {
			t.Errorf("message %q", err)
		}
	}
}

// testQuit: with no tray, Quit says none ran; with one, it asks it, which
// gives the session up and ends, and Quit returns once it has (the next
// Claim is the tray); a tray that is asked and does not quit is a
// *NotQuit when the wait ends, and still holds the session. pid is the
// tray's PID as Quit knows it (0: not known).
func testQuit(t *testing.T, pid func(*child) int) {
	dir := t.TempDir()
	if was, err := Quit(context.Background(), dir); was || err != nil {
		t.Fatalf("Quit with no tray: %v, %v; want false, nil", was, err)
	}
	c := startChild(t, "claim", dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if was, err := Quit(ctx, dir); !was || err != nil {
		t.Fatalf("Quit with a tray: %v, %v; want true, nil", was, err)
	}
	if got := c.next(t); got != "quit asked" {
		t.Errorf("the tray says %q, want quit asked", got)
	}
	c.ended(t)
	p, err := Claim(dir)
	if err != nil {
		t.Fatalf("Claim once the tray quit: %v", err)
	}
	p.Close()

	s := startChild(t, "stubborn", dir)
	// It never quits: the wait's length decides nothing.
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	was, err := Quit(short, dir)
	var nq *NotQuit
	if !was || !errors.As(err, &nq) || !nq.Asked || !errors.Is(err, context.DeadlineExceeded) || nq.PID != pid(s) {
		t.Fatalf("Quit with a tray that stays: %v, %v (%+v); want true, a *NotQuit, asked, PID %d", was, err, nq, pid(s))
	}
	if !strings.Contains(err.Error(), "was asked to quit and still runs") {
		t.Errorf("message %q", err)
	}
	if got := s.next(t); got != "quit asked" {
		t.Errorf("the tray says %q, want quit asked", got)
	}
	claimSecond(t, s, dir, true, pid(s))
}
