package words

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

func TestShort(t *testing.T) {
	home := filepath.FromSlash("/home/ada")
	for _, tc := range []struct{ home, path, want string }{
		{home, filepath.FromSlash("/home/ada/llm/.venv"), filepath.FromSlash("~/llm/.venv")},
		{home, home, "~"},
		{home, filepath.FromSlash("/home/adam/x"), filepath.FromSlash("/home/adam/x")},
		{home, "", ""},
		{"", filepath.FromSlash("/home/ada/x"), filepath.FromSlash("/home/ada/x")},
	} {
		if got := Short(tc.home, tc.path); got != tc.want {
			t.Errorf("Short(%q, %q) = %q, want %q", tc.home, tc.path, got, tc.want)
		}
	}
}

// TestCell: what is unknown is "-", never 0; every GPU a process uses is
// named; home is ~ in the environment and the command.
func TestCell(t *testing.T) {
	home := filepath.FromSlash("/home/ada")
	start := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	mem := uint64(3 << 30)
	job := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 4242, User: "ada", StartTime: start, CPUPercent: 99.5, RSSBytes: 2 << 30,
		Cmdline: []string{"python", filepath.FromSlash("/home/ada/train.py")}, EnvPath: filepath.FromSlash("/home/ada/llm/.venv")},
		Verdict: procs.VerdictGPU, GPUs: []int{0, 1}, GPUMemoryBytes: &mem}}
	outside := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 77777}, Verdict: procs.VerdictGPU, OutsideContainer: true}}
	now := start.Add(90 * time.Minute)
	for _, tc := range []struct {
		r    monitor.Process
		c    Col
		want string
	}{
		{job, ColGPU, "0,1"},
		{job, ColPID, "4242"},
		{job, ColEnv, filepath.FromSlash("~/llm/.venv")},
		{job, ColCommand, "python " + filepath.FromSlash("~/train.py")},
		{job, ColCPU, "99.5"},
		{job, ColRuntime, "1h30m"},
		{job, ColVerdict, "gpu"},
		{job, ColContainer, "-"},
		{outside, ColGPU, "-"},
		{outside, ColEnv, "-"},
		{outside, ColCPU, "-"},
		{outside, ColRSS, "-"},
		{outside, ColRuntime, "-"},
		{outside, ColGPUMemory, "n/a"},
		{outside, ColSM, "-"},
	} {
		if got := Cell(tc.r, tc.c, now, home); got != tc.want {
			t.Errorf("Cell(pid %d, %d) = %q, want %q", tc.r.PID, tc.c, got, tc.want)
		}
	}
}

// TestCommand: the command column shows the script and its arguments
// (python train.py --epochs 90), not the interpreter's path the
// environment column already names; a long path argument keeps its end.
func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		name string
		want string
	}{
		{[]string{"/home/ana/work/proj/.venv/bin/python", "train.py", "--epochs", "90"}, "python", "python train.py --epochs 90"},
		{[]string{"/home/ana/work/proj/.venv/bin/python", "/home/ana/work/vision/experiments/2026-11/scripts/train.py", "--data=/data/imagenet"},
			"python", "python …/2026-11/scripts/train.py --data=/data/imagenet"},
		{[]string{`C:\Users\ana\ComfyUI_windows_portable\python_embeded\python.exe`, "-s", `ComfyUI\main.py`}, "python.exe", `python.exe -s ComfyUI\main.py`},
		{[]string{"llama-server", "-m", "/home/ana/models/q4.gguf", "-ngl", "99"}, "llama-server", "llama-server -m ~/models/q4.gguf -ngl 99"},
		{[]string{"python  -c", "print(1)"}, "python", "python -c print(1)"},
		{nil, "kworker", "kworker"},
	} {
		r := monitor.Process{}
		r.Cmdline, r.Name = tc.argv, tc.name
		if got := Command(r, "/home/ana"); got != tc.want {
			t.Errorf("Command(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestUnmark(t *testing.T) {
	for in, want := range map[string]string{
		"by `uv run`.":                      "by “uv run”.",
		"`python train.py` (PID 4242) in x": "“python train.py” (PID 4242) in x",
		"a lone ` stays":                    "a lone ` stays",
		"`a` and `b` and `c":                "“a” and “b” and `c",
		"none":                              "none",
	} {
		if got := Unmark(in); got != want {
			t.Errorf("Unmark(%q) = %q, want %q", in, got, want)
		}
	}
}
