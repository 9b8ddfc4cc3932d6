package human

import (
	"testing"
	"time"
	"unicode/utf8"
)

func TestFormats(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 40 << 30: "40.0 GiB", 3 << 40: "3.0 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{42 * time.Second: "42s", 185 * time.Second: "3m05s", 130 * time.Minute: "2h10m", 80 * time.Hour: "3d"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
	if got := Truncate("héllo world", 5); got != "héll…" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("Truncate = %q", got)
	}
}

// TestShorten: a long command keeps its program's and script's names
// whole: the folders in front of them go first; the end is cut only
// outside a path.
func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"python train.py", 80, "python train.py"},
		{"/home/ada/work/llm/.venv/bin/python /home/ada/work/llm/scripts/train_the_big_model.py --epochs 3", 60,
			"…/llm/.venv/bin/python …/scripts/train_the_big_model.py --e…"},
		{"python /a/b/c/d/e/f/g/h/i/train.py", 24, "python …/g/h/i/train.py"},
		// The cut is in the script's text, not in a path: the end goes.
		{"/home/ada/.venv/bin/python -c import mmap, sys; x = 0; while True: x += 1", 40, "/home/ada/.venv/bin/python -c import mm…"},
		// A URL is no folder path.
		{"pip --index-url https://download.pytorch.org/whl/cu124 torch", 30, "pip --index-url https://downl…"},
		// An option's path keeps the option's name.
		{`pip install --prefix=Z:\tmp\gpucanary-wine.9pKs1g\procs-e2e\serve\.venv torch==2.5.1+cpu`, 60, `pip install --prefix=…\procs-e2e\serve\.venv torch==2.5.1+c…`},
	} {
		got := Shorten(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if utf8.RuneCountInString(got) > tc.n {
			t.Errorf("Shorten(%q, %d) = %q is longer than %d", tc.s, tc.n, got, tc.n)
		}
	}
}

func TestJobName(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"/home/ada/.venv/bin/python", "/home/ada/work/train.py", "--epochs", "3"}, "train.py"},
		{[]string{"python", "-u", "-m", "torch.distributed.run", "train.py"}, "torch.distributed.run"},
		{[]string{"python", "--config=conf.py"}, "python"},
		{[]string{`C:\envs\py\python.exe`, `C:\work\Train.PY`}, "Train.PY"},
		{[]string{"/usr/bin/llama-server"}, "llama-server"},
		{nil, ""},
	} {
		if got := JobName(tc.cmd); got != tc.want {
			t.Errorf("JobName(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
