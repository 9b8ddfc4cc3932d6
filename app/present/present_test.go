package present

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestModel checks the tray model as a pure function of the engine's
// state: no display is involved.
func TestModel(t *testing.T) {
	s := presenttest.State()
	noDriver := monitor.State{Started: true, GPU: gpu.State{}}
	for _, tc := range []struct {
		name    string
		s       monitor.State
		paused  bool
		snoozed string
		icon    monitor.Overall
		tooltip string
		envs    []string
	}{
		{"before the engine's first read", monitor.State{}, false, "", monitor.OverallHealthy, "GPU Canary: starting…", nil},
		{"a broken environment", s, false, "", monitor.OverallError, "GPU Canary: 1 GPU (simulated) · 1 job on GPU · 1 job on CPU · 2 envs · 1 env broken",
			[]string{"✓ vision/.venv — torch 2.5.1+cu121 CUDA 12.1", "✗ llm/.venv — torch 2.10.0 CPU only"}},
		{"snoozed and paused", s, true, "/home/ada/work/llm/.venv", monitor.OverallError, "", nil},
		{"no driver, no environment", noDriver, false, "", monitor.OverallNoDriver, "GPU Canary: no NVIDIA driver · 0 envs", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Model(tc.s, tc.paused, func(env string) bool { return env == tc.snoozed })
			if m.Icon != tc.icon || (tc.tooltip != "" && m.Tooltip != tc.tooltip) {
				t.Errorf("icon %q tooltip %q, want %q %q", m.Icon, m.Tooltip, tc.icon, tc.tooltip)
			}
			if m.Started != tc.s.Started || m.Paused != tc.paused {
				t.Errorf("started %v paused %v", m.Started, m.Paused)
			}
			for i, want := range tc.envs {
				if m.Envs[i].Label != want {
					t.Errorf("env %d = %q, want %q", i, m.Envs[i].Label, want)
				}
			}
			for _, e := range m.Envs {
				if e.Snoozed != (e.Path == tc.snoozed) {
					t.Errorf("%s snoozed = %v", e.Path, e.Snoozed)
				}
				if e.Reinstall != strings.Contains(e.Path, "llm") {
					t.Errorf("%s reinstall = %v", e.Path, e.Reinstall)
				}
			}
		})
	}
}

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
		Message: "`python train.py` (PID 4242) in " + env + " has been busy on the CPU for 25s: torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present."}
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
			title, body := Notification(tc.e, tc.reinstall)
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

func TestActivateCommand(t *testing.T) {
	env := &pyenv.Env{Path: "/home/u/my env/.venv", Layout: pyenv.LayoutPOSIX, Kind: "venv"}
	for _, tc := range []struct{ goos, shell, want string }{
		{"linux", "/bin/bash", "source '/home/u/my env/.venv/bin/activate'"},
		{"linux", "/usr/bin/fish", "source '/home/u/my env/.venv/bin/activate.fish'"},
		{"linux", "/bin/tcsh", "source '/home/u/my env/.venv/bin/activate.csh'"},
	} {
		if got := ActivateCommand(env, tc.goos, tc.shell); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.goos, tc.shell, got, tc.want)
		}
	}
	if got := ActivateCommand(&pyenv.Env{Path: "/opt/conda/envs/x", Kind: "conda"}, "linux", "/bin/bash"); got != "conda activate /opt/conda/envs/x" {
		t.Errorf("conda: %q", got)
	}
}

// TestGPUSamples keeps one point per gap, at most SampleHistory, and
// hands out copies that the tray can keep writing under.
func TestGPUSamples(t *testing.T) {
	var h GPUSamples
	at := presenttest.State().GPU
	start := time.Unix(1_000_000, 0)
	for i := 0; i < SampleHistory+10; i++ {
		h.Add(at, start.Add(time.Duration(i)*2*time.Second), time.Second)
		h.Add(at, start.Add(time.Duration(i)*2*time.Second+100*time.Millisecond), time.Second) // too soon: dropped
	}
	key := DeviceKey(at.Devices[0])
	if len(h.Util[key]) != SampleHistory || len(h.Mem[key]) != SampleHistory {
		t.Fatalf("kept %d/%d points, want %d", len(h.Util[key]), len(h.Mem[key]), SampleHistory)
	}
	if h.Util[key][0] != 0.87 {
		t.Errorf("utilization point %v, want 0.87", h.Util[key][0])
	}
	c := h.Clone()
	h.Util[key][0] = 0
	if c.Util[key][0] != 0.87 {
		t.Error("Clone shares its slices")
	}
}

// TestSummarySaysSearchIncomplete: a search cut short by its budget is
// never silent in the tray's summary, from the engine or a check.
func TestSummarySaysSearchIncomplete(t *testing.T) {
	s := monitor.State{SearchStopped: "the search of /home/me stopped at its budget of 200000 entries"}
	if got := Summary(s); !strings.HasSuffix(got, " · search incomplete") {
		t.Errorf("Summary = %q", got)
	}
	if got := Summary(monitor.State{}); strings.Contains(got, "incomplete") {
		t.Errorf("complete search: Summary = %q", got)
	}
	if got := CheckSummary(monitor.CheckResult{Complete: false}); !strings.Contains(got, "search incomplete") {
		t.Errorf("CheckSummary = %q", got)
	}
	if got := CheckSummary(monitor.CheckResult{Complete: true}); strings.Contains(got, "incomplete") {
		t.Errorf("CheckSummary of a complete check = %q", got)
	}
}
