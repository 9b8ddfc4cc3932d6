package jobend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplain: each way a job ends, from the evidence, in the order the
// reasons are believed; a guess is said as one.
func TestExplain(t *testing.T) {
	dir := t.TempDir()
	logOf := func(name, text string) []Log {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return []Log{{Path: p}}
	}
	oom := "epoch 1\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    x = torch.empty(10**12, device='cuda')\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.73 TiB. GPU 0 has a total capacity of 79.19 GiB\n"
	for _, tc := range []struct {
		name   string
		ev     Evidence
		how    How
		reason string
		quote  string
	}{
		{"exit 0", Evidence{Status: Status{Known: true}}, Finished, "exited with status 0", ""},
		{"exit 0 beats a traceback", Evidence{Status: Status{Known: true}, Logs: logOf("a.log", oom)}, Finished, "exited with status 0", ""},
		{"SIGKILL", Evidence{Status: Status{Known: true, Signal: 9}}, Crashed, "killed by SIGKILL", ""},
		{"exit 1 and a CUDA OOM in the log", Evidence{Status: Status{Known: true, Code: 1}, Logs: logOf("b.log", oom)}, Crashed, "ran out of GPU memory", "torch.OutOfMemoryError: CUDA out of memory."},
		{"OOM killer", Evidence{OOMKilled: true, Logs: logOf("c.log", "step 9\n")}, Crashed, "probably killed by the Linux out-of-memory killer", ""},
		{"log OOM", Evidence{Logs: logOf("d.log", oom)}, Crashed, "ran out of GPU memory", "torch.OutOfMemoryError: CUDA out of memory."},
		{"CUDA error", Evidence{Logs: logOf("e.log", "Traceback (most recent call last):\n  File \"x\"\nRuntimeError: CUDA error: an illegal memory access was encountered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")},
			Crashed, "a CUDA error", "RuntimeError: CUDA error: an illegal memory access"},
		{"exception", Evidence{Logs: logOf("f.log", "Traceback (most recent call last):\n  File \"x\"\nValueError: bad shape\n")}, Crashed, "an unhandled Python exception", "ValueError: bad shape"},
		{"Ctrl-C", Evidence{Logs: logOf("g.log", "Traceback (most recent call last):\n  File \"x\"\nKeyboardInterrupt\n")}, Crashed, "interrupted (Ctrl-C)", "KeyboardInterrupt"},
		{"shell said Killed", Evidence{Logs: logOf("h.log", "step 3\nKilled\n")}, Crashed, "killed (SIGKILL", "Killed"},
		{"clean log", Evidence{Logs: logOf("i.log", "epoch 3/3 loss 0.1\r100%|####|\ndone\n")}, Finished, "its log ends without an error", ""},
		{"secret in the quote", Evidence{Logs: logOf("j.log", "Traceback (most recent call last):\n  File \"x\"\nHTTPError: 401 for https://user:hunter2@example.com/x\n")}, Crashed, "an unhandled Python exception", "HTTPError: 401 for"},
		{"GPU full, nothing else", Evidence{MemFraction: 0.99}, Unknown, "probably ran out of GPU memory", ""},
		{"nothing", Evidence{}, Unknown, "ended (" + statusHidden, ""},
		{"empty log", Evidence{Logs: logOf("k.log", "")}, Unknown, "ended (", ""},
		{"gone log", Evidence{Logs: []Log{{Path: filepath.Join(dir, "none.log")}}}, Unknown, "ended (", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Explain(tc.ev)
			if e.How != tc.how || !strings.Contains(e.Reason, tc.reason) || !strings.HasPrefix(e.Quote, tc.quote) || (tc.quote == "" && e.Quote != "") {
				t.Errorf("Explain = %+v, want %s %q %q", e, tc.how, tc.reason, tc.quote)
			}
			if strings.Contains(e.Quote, "hunter2") {
				t.Errorf("the quote shows a password: %q", e.Quote)
			}
		})
	}
}

// TestLogReplacedIsNotRead: a file put at the log's path after the job
// wrote to it is not the job's log, and says nothing.
func TestLogReplacedIsNotRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "train.log")
	if err := os.WriteFile(p, []byte("done\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(p) // held, so that its inode is not given to the new file
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	other := p + ".new"
	if err := os.WriteFile(other, []byte("Traceback (most recent call last):\nValueError: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	if e := Explain(Evidence{Logs: []Log{{Path: p, info: fi}}}); e.How != Unknown || e.Log != "" {
		t.Errorf("a replaced log was read: %+v", e)
	}
}

// TestLongLogReadsItsTail: only the last 64 KiB are read, and what is
// before them says nothing.
func TestLongLogReadsItsTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "train.log")
	body := "Traceback (most recent call last):\nValueError: long ago\n" + strings.Repeat("step ok\n", 20000) + "done\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if e := Explain(Evidence{Logs: []Log{{Path: p}}}); e.How != Finished {
		t.Errorf("an old traceback before the tail decided: %+v", e)
	}
}
