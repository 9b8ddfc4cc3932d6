package procs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestAProcessThatExecsIsReadAgain: what never changes in a process's
// life is read once, but exec changes it within one life (one PID, one
// start time): a shell that execs its job, a child scanned between fork
// and exec (a copy of its parent then). The scan after the exec shows the
// program now running, not the one first seen.
func TestAProcessThatExecsIsReadAgain(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read x; exec sleep 60")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	waitExeced(t, cmd)
	s := NewSource(Options{})
	scan := func() Proc {
		t.Helper()
		ps, err := s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(ps, func(p Proc) bool { return p.PID == pid })
		if i < 0 {
			t.Fatalf("PID %d was not scanned", pid)
		}
		return ps[i]
	}
	if p := scan(); p.Name != "sh" {
		t.Fatalf("before the exec: name %q, command %q", p.Name, p.Cmdline)
	}
	in.Write([]byte("\n"))
	// Wait until the exec is over: the program and its command line are
	// the new ones.
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		exe, _ := os.Readlink(filepath.Join(dir, "exe"))
		args, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if filepath.Base(exe) == "sleep" && string(args) == "sleep\x0060\x00" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sh did not exec sleep within a minute (exe %q, cmdline %q)", exe, args)
		}
	}
	p := scan()
	if p.Name != "sleep" || !slices.Equal(p.Cmdline, []string{"sleep", "60"}) || filepath.Base(p.Exe) != "sleep" {
		t.Errorf("after the exec: name %q, command %q, exe %q; want sleep", p.Name, p.Cmdline, p.Exe)
	}
}
