package app

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func TestNotificationText(t *testing.T) {
	home := homeDir()
	env := home + "/work/llm/.venv"
	replaced := monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: env, Notify: true,
		Before:  &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"},
		After:   &pyenv.Package{Version: "2.10.0", Build: pyenv.BuildCPU},
		Message: "torch in " + env + " was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run`.",
		Fix:     "uv pip install --python " + env + " --reinstall --no-deps torch==2.10.0+cu128"}
	job := monitor.Event{Kind: monitor.KindJobOnCPU, Env: env, PID: 4242, Notify: true,
		Finding: &health.Finding{Code: health.CodeJobOnCPU, Severity: health.SeverityError, Env: env, PID: 4242},
		Message: "`python train.py` (PID 4242) in " + env + " has been busy on the CPU for 25s although an NVIDIA GPU is present: torch 2.10.0 is a CPU-only build."}
	cleared := monitor.Event{Kind: monitor.KindFindingCleared, Env: env, Notify: true, Message: "TORCH_CPU_BUILD is resolved in " + env + ".", Fix: "ignored"}
	for _, tc := range []struct {
		name       string
		e          monitor.Event
		reinstall  bool
		title      string
		body, nots []string
	}{
		{"replaced, reinstall offered", replaced, true, "torch lost its CUDA build in ~/work/llm/.venv",
			[]string{"torch in ~/work/llm/.venv was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run`. Fix: Reinstall from the tray menu."},
			[]string{home + "/", "uv pip install"}},
		{"replaced, no repairer: the command", replaced, false, "torch lost its CUDA build in ~/work/llm/.venv",
			[]string{"Fix: uv pip install --python ~/work/llm/.venv --reinstall"}, []string{home + "/", "tray menu"}},
		{"job on the CPU names the process, its environment and why", job, true, "A GPU job is running on the CPU (~/work/llm/.venv)",
			[]string{"`python train.py` (PID 4242) in ~/work/llm/.venv", "CPU-only build", "Fix: Reinstall from the tray menu, then restart the job."}, nil},
		{"a clear has no fix", cleared, true, "Resolved in ~/work/llm/.venv", []string{"is resolved"}, []string{"Fix:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, body := notification(tc.e, tc.reinstall)
			if title != tc.title {
				t.Errorf("title = %q, want %q", title, tc.title)
			}
			for _, w := range tc.body {
				if !strings.Contains(body, w) {
					t.Errorf("body %q lacks %q", body, w)
				}
			}
			for _, w := range tc.nots {
				if strings.Contains(body, w) {
					t.Errorf("body %q has %q", body, w)
				}
			}
		})
	}
}

// TestNotificationsSent drives onEvent as the engine's subscription does:
// what the engine marks Notify is sent, unless paused here.
func TestNotificationsSent(t *testing.T) {
	u, _, paths, _ := newTestUI(t, a100)
	ev := monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: paths[1], Notify: true, Time: time.Now(),
		Message: "torch in " + paths[1] + " was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run train.py` (PID 4242).",
		Fix:     "uv pip install --python " + paths[1] + " --reinstall --no-deps torch==2.10.0+cu128"}
	title, body := notification(ev, false)
	test.AssertNotificationSent(t, fyne.NewNotification(title, body), func() { u.onEvent(ev) })

	// With a repairer the broken environment offers a reinstall, and the
	// notification points at it; an injected Notify receives it.
	var got []string
	u.d.Repair = &fakeRepairer{ran: make(chan fix.Plan, 1)}
	u.d.Notify = func(title, body string) { got = append(got, title+" | "+body) }
	u.onEvent(ev)
	if len(got) != 1 || !strings.HasSuffix(got[0], "Fix: Reinstall from the tray menu.") || !strings.Contains(got[0], "llm/.venv") {
		t.Errorf("sent %q", got)
	}
	for _, tc := range []struct {
		name  string
		setup func()
	}{
		{"not marked Notify", func() { ev.Notify = false }},
		{"paused for an hour", func() { ev.Notify = true; u.pausedUntil = u.now().Add(time.Hour) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			tc.setup()
			u.onEvent(ev)
			if len(got) != 0 {
				t.Errorf("sent %q", got)
			}
		})
	}
}
