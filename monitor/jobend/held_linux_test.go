package jobend

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// waitEnded polls h until it ends (a condition; the deadline only ends a
// test that would hang).
func waitEnded(t *testing.T, h *Held) Status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if ended, st := h.Poll(); ended {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d never ended", h.PID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHeldReadsAZombiesStatus: a process our test started and has not
// reaped is a zombie, whose exit status (a signal, or a code) Poll reads;
// the file its output went to is remembered while it runs.
func TestHeldReadsAZombiesStatus(t *testing.T) {
	log := filepath.Join(t.TempDir(), "train.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		args []string
		kill bool
		want Status
	}{
		{"killed", []string{"sleep", "300"}, true, Status{Known: true, Signal: 9}},
		{"exit 3", []string{"sh", "-c", "read x; exit 3"}, false, Status{Known: true, Code: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(tc.args[0], tc.args[1:]...)
			cmd.Stdout, cmd.Stderr = f, f
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			h, err := Open("", cmd.Process.Pid, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Logs) != 2 || h.Logs[0].Path != log {
				t.Errorf("logs = %+v, want %s twice", h.Logs, log)
			}
			if h.Start.IsZero() || len(h.Cmdline) == 0 {
				t.Errorf("held = %+v", h)
			}
			if ended, _ := h.Poll(); ended {
				t.Fatal("ended while it runs")
			}
			if tc.kill {
				cmd.Process.Signal(syscall.SIGKILL)
			} else {
				in.Close()
			}
			if st := waitEnded(t, h); st != tc.want {
				t.Errorf("status = %+v, want %+v", st, tc.want)
			}
		})
	}
}

// TestHeldReapedOrTaken: once reaped, the process is gone and its status
// unknown; a start time that is not the process's is another process.
func TestHeldReapedOrTaken(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h, err := Open("", cmd.Process.Pid, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open("", cmd.Process.Pid, h.Start.Add(-time.Hour)); !errors.Is(err, ErrNoProcess) {
		t.Errorf("another start time: %v, want ErrNoProcess", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if st := waitEnded(t, h); st.Known {
		t.Errorf("a reaped process's status = %+v, not unknown", st)
	}
	if _, err := Open("", cmd.Process.Pid, time.Time{}); !errors.Is(err, ErrNoProcess) {
		t.Errorf("a gone PID: %v, want ErrNoProcess", err)
	}
}
