//go:build unix

package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fixjournal"
)

// TestFixStopsCleanlyOnHangup: SIGHUP (the terminal closed, the SSH
// session dropped) during a repair stops it as Ctrl-C does: the
// installer is stopped, the outcome is printed with the state the
// environment is in, and the journal records the end; before, the
// program died at once with no report (issue 32, L9).
func TestFixStopsCleanlyOnHangup(t *testing.T) {
	c := newFixCase(t, "")
	c.idx.SetDelay(time.Minute) // pip waits on its first download until stopped
	state := t.TempDir()
	cmd := gpucanaryCmd(t, state, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", c.base, c.venv)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "  │ ") { // the installer has started
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitFound {
		t.Fatalf("exit %d (%v), want 1 after the hangup\nstdout:\n%s\nstderr:\n%s", code, cmd.ProcessState, out.String(), stderr.String())
	}
	for _, want := range []string{"Not fixed: ", "Installed now: torch 2.5.1+cpu", "Journal: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	journals, _ := filepath.Glob(filepath.Join(state, "gpucanary", "journal", "*.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals: %v", journals)
	}
	rec, err := fixjournal.ReadJournal(journals[0])
	if err != nil || rec.Result == nil || !rec.Result.Interrupted {
		t.Errorf("the journal does not record the interrupted end: %+v, %v", rec.Result, err)
	}
	if _, err := os.Stat(c.venv); err != nil {
		t.Error(err)
	}
}
