//go:build linux

package procs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScannedCommandLinesAreRedacted: what `ps --json`, the report's
// processes.json and the culprit of an overwrite show of a real process
// started with secrets on its command line holds none of them.
func TestScannedCommandLinesAreRedacted(t *testing.T) {
	py := realPython(t)
	secrets := []string{"hunter2", "pg-secret", "hf_abcdefghijklmnopqrstuv", "s3cret"}
	cmd := exec.Command(py, "-c", "import sys; sys.stdin.read()",
		"--pass", "hunter2", "PGPASSWORD=pg-secret", "--hf-token=hf_abcdefghijklmnopqrstuv", "--index-url", "https://ada:s3cret@mirror.example/simple")
	p := scanStarted(t, cmd)[cmd]
	line := strings.Join(p.Cmdline, " ")
	if !strings.Contains(line, "--pass ***") || !strings.Contains(line, "https://ada:***@mirror.example/simple") {
		t.Errorf("command line not redacted as expected: %q", line)
	}
	for _, s := range secrets {
		if strings.Contains(line, s) || strings.Contains(p.Command(), s) {
			t.Errorf("%q shows the secret %q", line, s)
		}
	}
}

// TestScannedShellStringsAreRedacted: a real shell whose -c string holds
// a password option, and a real python whose -c program holds a
// password, are scanned with the secret hidden and the rest readable.
func TestScannedShellStringsAreRedacted(t *testing.T) {
	py := realPython(t)
	sh := exec.Command("sh", "-c", "redis-cli -a shell-secret ping 2>/dev/null; cat")
	code := exec.Command(py, "-c", "import sys; password='code-secret'; sys.stdin.read()")
	want := map[*exec.Cmd]string{
		sh:   "sh -c redis-cli -a *** ping 2>/dev/null; cat",
		code: "-c import sys; password='***'; sys.stdin.read()",
	}
	for cmd, p := range scanStarted(t, sh, code) {
		line := strings.Join(p.Cmdline, " ")
		if !strings.Contains(line, want[cmd]) {
			t.Errorf("command line %q (unreadable: %v), want it to hold %q", line, p.Unreadable, want[cmd])
		}
		if strings.Contains(line, "shell-secret") || strings.Contains(line, "code-secret") {
			t.Errorf("%q shows a secret", line)
		}
	}
}

// scanStarted starts each command, waiting on its standard input until
// the test ends, and returns what one scan of every process saw of each.
func scanStarted(t *testing.T, cmds ...*exec.Cmd) map[*exec.Cmd]Proc {
	t.Helper()
	for _, cmd := range cmds {
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close(); cmd.Wait() })
	}
	for _, cmd := range cmds {
		waitExeced(t, cmd)
	}
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*exec.Cmd]Proc{}
	for _, cmd := range cmds {
		for _, p := range ps {
			if p.PID == cmd.Process.Pid {
				seen[cmd] = p
			}
		}
		if _, ok := seen[cmd]; !ok {
			t.Fatalf("%s was not scanned", cmd)
		}
	}
	return seen
}

// realPython is the file python3 really is: a pyenv shim on PATH is a
// script that execs the interpreter, a second exec a scan could fall in.
func realPython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed (make test installs it)")
	}
	out, err := exec.Command(py, "-c", "import os, sys; print(os.path.realpath(sys.executable))").Output()
	if err != nil {
		t.Fatalf("asking %s where it is: %v", py, err)
	}
	return strings.TrimSpace(string(out))
}

// waitExeced waits until the child pid runs cmd's own program with its
// command line: between fork and exec it is a copy of this test binary,
// with this binary's command line in /proc; during the exec its command
// line is empty for a moment; a program reached through a wrapper (a
// shim script that execs the real one) runs the wrapper's interpreter
// first. A scan in any of those moments sees no secret to hide. So the
// wait is for the file cmd names (links resolved) and for the command
// line's last argument.
func waitExeced(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	pid := cmd.Process.Pid
	want, err := filepath.EvalSymlinks(cmd.Path)
	if err != nil {
		t.Fatal(err)
	}
	last := []byte(cmd.Args[len(cmd.Args)-1] + "\x00")
	exe, cmdline := fmt.Sprintf("/proc/%d/exe", pid), fmt.Sprintf("/proc/%d/cmdline", pid)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		p, err := os.Readlink(exe)
		args, _ := os.ReadFile(cmdline)
		if err == nil && p == want && bytes.HasSuffix(args, last) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not exec %s within a minute (exe %q, command line %q)", pid, want, p, args)
		}
	}
}
