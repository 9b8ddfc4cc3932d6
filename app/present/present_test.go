package present

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
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
			m := Model(tc.s, time.Now(), tc.paused, func(env string) bool { return env == tc.snoozed })
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
	home := HomeDir()
	env := home + "/work/llm/.venv"
	replaced := monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: env, Notify: true,
		Before:  &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"},
		After:   &pyenv.Package{Version: "2.10.0", Build: pyenv.BuildCPU},
		Message: "torch in " + env + " was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run`.",
		Fix:     "uv pip install --python " + env + " --reinstall --no-deps torch==2.10.0+cu128"}
	job := monitor.Event{Kind: monitor.KindJobOnCPU, Env: env, PID: 4242, Notify: true,
		Finding: &finding.Finding{Code: finding.CodeJobOnCPU, Severity: finding.SeverityError, Env: env, PID: 4242},
		Message: "`python train.py` (PID 4242) in " + env + " has been busy on the CPU for 25s: torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present."}
	cleared := monitor.Event{Kind: monitor.KindFindingCleared, Env: env, Notify: true, Message: "TORCH_CPU_BUILD is resolved in " + env + ".", Fix: "ignored"}
	warned := monitor.Event{Kind: monitor.KindFindingRaised, Env: env, Notify: true, Message: "an old driver",
		Finding: &finding.Finding{Code: "DRIVER_OLD", Severity: finding.SeverityWarning, Env: env}}
	for _, tc := range []struct {
		name       string
		e          monitor.Event
		reinstall  bool
		title      string
		level      Level
		body, nots []string
	}{
		{"replaced, reinstall offered", replaced, true, "torch lost its CUDA build in ~/work/llm/.venv", LevelError,
			[]string{"torch in ~/work/llm/.venv was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by “uv run”."},
			[]string{home + "/", "uv pip install", "`", "tray menu", "Fix:"}},
		{"replaced, no repairer: the command", replaced, false, "torch lost its CUDA build in ~/work/llm/.venv", LevelError,
			[]string{"Fix: uv pip install --python ~/work/llm/.venv --reinstall"}, []string{home + "/", "tray menu", "`"}},
		{"job on the CPU names the process, its environment and why", job, true, "A GPU job is running on the CPU (~/work/llm/.venv)", LevelError,
			[]string{"“python train.py” (PID 4242) in ~/work/llm/.venv", "CPU-only build", "Repair the environment, then restart the job."}, []string{"`", "tray menu"}},
		{"a clear has no fix", cleared, true, "Resolved in ~/work/llm/.venv", LevelSuccess, []string{"is resolved"}, []string{"Fix:"}},
		{"a finding's level is its severity", warned, false, "Problem in ~/work/llm/.venv: DRIVER_OLD", LevelWarning, []string{"an old driver"}, nil},
		{"the job left the CPU", monitor.Event{Kind: monitor.KindJobOnCPUCleared, Env: env}, false, "The job is no longer stuck on the CPU", LevelSuccess, nil, nil},
		{"torch changed", monitor.Event{Kind: monitor.KindTorchChanged, Env: env}, false, "torch changed in ~/work/llm/.venv", LevelInfo, nil, nil},
		{"a GPU's health names the GPU", monitor.Event{Kind: monitor.KindFindingRaised, Notify: true,
			Message: "GPU 1 (NVIDIA RTX A6000) is slowing down under load: HW thermal slowdown 35% of the last 60 s.",
			Finding: &finding.Finding{Code: finding.CodeGPUThrottled, Severity: finding.SeverityWarning, Env: "gpu:1"}},
			false, "GPU 1: the GPU is throttled under load", LevelWarning, []string{"HW thermal slowdown 35%"}, []string{"Fix:"}},
		{"a spill names the GPU", monitor.Event{Kind: monitor.KindFindingRaised, Notify: true,
			Message: "PID 5120 on GPU 0 (NVIDIA GeForce RTX 4090) has spilled into system memory for 60 s, growing to 1.5 GiB, with the GPU's own memory 99% full: training is using system memory through the driver's fallback and will run many times slower.",
			Finding: &finding.Finding{Code: finding.CodeVRAMSpill, Severity: finding.SeverityWarning, Env: "gpu:0", PID: 5120}},
			false, "GPU 0: training spills into system memory", LevelWarning, []string{"PID 5120", "many times slower"}, []string{"Fix:"}},
		{"a driver reset is the machine's", monitor.Event{Kind: monitor.KindFindingRaised, Notify: true,
			Message: "The display driver (nvlddmkm) stopped responding and Windows reset it (a TDR, System log Display event 4101).",
			Finding: &finding.Finding{Code: finding.CodeDriverReset, Severity: finding.SeverityError}},
			false, "GPU Canary: the display driver was reset", LevelError, []string{"nvlddmkm"}, nil},
		{"a GPU's health cleared", monitor.Event{Kind: monitor.KindFindingCleared, Notify: true, Message: "GPU 1 runs at full speed again under load.",
			Finding: &finding.Finding{Code: finding.CodeGPUThrottled, Severity: finding.SeverityWarning, Env: "gpu:1"}},
			false, "Resolved: GPU 1", LevelSuccess, []string{"full speed again"}, nil},
		{"a stalled job is about the job, with no repair of its environment", monitor.Event{Kind: monitor.KindFindingRaised, Env: env, PID: 4242, Notify: true,
			Message: "python train.py (PID 4242) has held 9.0 GiB of GPU memory on GPU 0 with the GPU idle (0% utilisation) for 10m0s, after computing for 1h2m.",
			Finding: &finding.Finding{Code: finding.CodeJobStalled, Severity: finding.SeverityWarning, Env: env, PID: 4242}},
			true, "A GPU job stalled (~/work/llm/.venv)", LevelWarning, []string{"GPU idle (0% utilisation)"}, []string{"Fix:", "tray menu"}},
		{"a spinning job", monitor.Event{Kind: monitor.KindFindingRaised, Notify: true, PID: 5151, Message: "spins",
			Finding: &finding.Finding{Code: finding.CodeJobSpinning, Severity: finding.SeverityWarning, PID: 5151}},
			false, "A GPU job spins without progress", LevelWarning, []string{"spins"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Notification(tc.e, tc.reinstall)
			title, body := n.Title, n.Body
			// The repair rides on the notification as its action.
			if want := tc.reinstall && tc.e.Kind != monitor.KindFindingCleared && !jobStall(tc.e.Finding); n.Repair != want {
				t.Errorf("Repair = %v, want %v", n.Repair, want)
			}
			if n.Env != tc.e.Env {
				t.Errorf("Env = %q, want %q", n.Env, tc.e.Env)
			}
			// A server without buttons is pointed at the menu.
			if got := n.NoActions().Body; n.Repair != strings.Contains(got, "Reinstall… entry under the environment in the tray menu") {
				t.Errorf("without actions the body is %q", got)
			}
			if title != tc.title {
				t.Errorf("title = %q, want %q", title, tc.title)
			}
			if n.Level != tc.level {
				t.Errorf("level = %q, want %q", n.Level, tc.level)
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
	for _, tc := range []struct{ shell, want string }{
		{"/bin/bash", "source '/home/u/my env/.venv/bin/activate'"},
		{"/usr/bin/fish", "source '/home/u/my env/.venv/bin/activate.fish'"},
		{"/bin/tcsh", "source '/home/u/my env/.venv/bin/activate.csh'"},
	} {
		if got := ActivateCommand(env, tc.shell); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.shell, got, tc.want)
		}
	}
	if got := ActivateCommand(&pyenv.Env{Path: "/opt/conda/envs/x", Kind: "conda"}, "/bin/bash"); got != "conda activate /opt/conda/envs/x" {
		t.Errorf("conda: %q", got)
	}
	// An environment in the Windows layout is activated by PowerShell's
	// script, quoted for PowerShell whatever the path holds.
	win := &pyenv.Env{Path: filepath.Join("C:", "Users", "me", "R&D $x", ".venv"), Layout: pyenv.LayoutWindows, Kind: "venv"}
	want := "& \"" + strings.ReplaceAll(filepath.Join(win.Path, "Scripts", "Activate.ps1"), "$", "`$") + "\""
	if got := ActivateCommand(win, "/bin/bash"); got != want {
		t.Errorf("Windows layout: %s, want %s", got, want)
	}
}

// TestTrayNotes: the tray's own notifications say what happened with the
// level it deserves, so "Report exported" does not wear a warning.
func TestTrayNotes(t *testing.T) {
	home := HomeDir()
	for _, tc := range []struct {
		name  string
		n     Note
		level Level
		says  string
	}{
		{"exported", ReportExported(home + "/gpucanary-report-1"), LevelSuccess, "written to ~/gpucanary-report-1."},
		{"not exported", ReportNotExported(errors.New("disk full")), LevelError, "disk full"},
		{"no window", WindowNotOpened(errors.New("no display")), LevelError, "no display"},
		{"no clipboard", CopyFailed("uv pip install torch"), LevelWarning, "uv pip install torch"},
		{"bad settings", SettingsFileError(errors.New("line 3: bad")), LevelWarning, "line 3: bad. The settings in use stay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.n.Level != tc.level || !strings.Contains(tc.n.Body, tc.says) || tc.n.Title == "" {
				t.Errorf("%+v, want level %q and a body with %q", tc.n, tc.level, tc.says)
			}
		})
	}
}

// TestKindNames: every kind has words, no two the same, and Settings
// offers exactly the kinds the engine's policy may notify about.
func TestKindNames(t *testing.T) {
	seen := map[string]monitor.Kind{}
	for _, k := range []monitor.Kind{monitor.KindCUDAWheelReplaced, monitor.KindTorchChanged, monitor.KindTorchRemoved,
		monitor.KindTorchInstalled, monitor.KindEnvAdded, monitor.KindEnvRemoved, monitor.KindJobOnCPU, monitor.KindJobOnCPUCleared,
		monitor.KindFindingRaised, monitor.KindFindingCleared, monitor.KindGPUStateChanged} {
		name := KindName(k)
		if name == string(k) || strings.Contains(name, "_") {
			t.Errorf("%s has no words: %q", k, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("%s and %s are both %q", k, other, name)
		}
		seen[name] = k
	}
	if got := KindName("SOMETHING_NEW"); got != "SOMETHING_NEW" {
		t.Errorf("an unknown kind shows as %q, want its code", got)
	}
	p := engine.NewPolicy()
	for _, k := range NotifyKinds() {
		if !p.Allows(k) {
			t.Errorf("Settings offers %s, which never notifies", k)
		}
	}
	for _, k := range []monitor.Kind{monitor.KindTorchInstalled, monitor.KindEnvAdded, monitor.KindEnvRemoved} {
		if p.Allows(k) || slices.Contains(NotifyKinds(), k) {
			t.Errorf("%s: policy allows %v, Settings offers %v", k, p.Allows(k), slices.Contains(NotifyKinds(), k))
		}
	}
	if len(NotifyKinds()) != len(config.NotifyKinds) {
		t.Errorf("Settings offers %d kinds: %v", len(NotifyKinds()), NotifyKinds())
	}
}

func TestEvidenceSays(t *testing.T) {
	for _, tc := range []struct{ says, want string }{
		{`INSTALLER "pip\n"`, `INSTALLER "pip"`},
		{`INSTALLER "uv\r\n"`, `INSTALLER "uv"`},
		{`INSTALLER "pip"`, `INSTALLER "pip"`},
		{`__version__ = "2.5.1+cu121"`, `__version__ = "2.5.1+cu121"`},
		{`cuda = "12.1"`, `cuda = "12.1"`},
		// Only one line end goes; what else a file hides stays visible.
		{`INSTALLER "pip\n\n"`, `INSTALLER "pip\n"`},
		{`INSTALLER "p\x1b[31mip\n"`, `INSTALLER "p\x1b[31mip"`},
		{`INSTALLER "\"quoted\"\n"`, `INSTALLER "\"quoted\""`},
		{"holds libtorch_cuda", "holds libtorch_cuda"},
		{`a lone " quote`, `a lone " quote`},
	} {
		if got := EvidenceSays(tc.says); got != tc.want {
			t.Errorf("EvidenceSays(%s) = %s, want %s", tc.says, got, tc.want)
		}
	}
}

func TestEvidenceFile(t *testing.T) {
	env := "/srv/envs/llm/.venv"
	for _, tc := range []struct{ file, want string }{
		{env + "/lib/python3.12/site-packages/torch/version.py", "lib/python3.12/site-packages/torch/version.py"},
		{env + "/pyvenv.cfg", "pyvenv.cfg"},
		{env, env},
		{"/srv/envs/llm/.venv2/pyvenv.cfg", "/srv/envs/llm/.venv2/pyvenv.cfg"},
		{"/opt/conda/pkgs/torch.json", "/opt/conda/pkgs/torch.json"},
	} {
		if got := EvidenceFile(tc.file, env); got != tc.want {
			t.Errorf("EvidenceFile(%s) = %s, want %s", tc.file, got, tc.want)
		}
	}
}

// TestNoReinstallForADeadInterpreter: a CPU torch in a venv whose
// interpreter is gone, or runs another Python than its packages', is not
// offered a reinstall in the menu (every installer runs that
// interpreter; fix's plan is blocked there): the finding's recreate
// command is the repair. The same torch with a working interpreter is.
func TestNoReinstallForADeadInterpreter(t *testing.T) {
	cpu := finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError}
	for _, tc := range []struct {
		name     string
		findings []finding.Finding
		want     bool
	}{
		{"CPU torch", []finding.Finding{cpu}, true},
		{"CPU torch, interpreter gone", []finding.Finding{cpu, {Code: finding.CodeEnvInterpreterMissing, Severity: finding.SeverityError}}, false},
		{"another Python, then CPU torch", []finding.Finding{{Code: finding.CodeEnvPythonMismatch, Severity: finding.SeverityError}, cpu}, false},
		{"a warning a reinstall fixes", []finding.Finding{{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityWarning}}, false},
	} {
		if got := NeedsReinstall(monitor.EnvReport{Findings: tc.findings}); got != tc.want {
			t.Errorf("%s: reinstall offered = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNotificationTextIsSafe: a folder name holding markup, a newline or
// U+202E never reaches a notification's title as written, and control
// and bidi characters in the body show as escapes (issue 32, L8).
func TestNotificationTextIsSafe(t *testing.T) {
	for _, tc := range []struct {
		name, env, title string
	}{
		{"markup", `/srv/<a href="file:/etc/passwd">x</a>/.venv`, "torch lost its CUDA build in an environment"},
		{"an ampersand", "/srv/a&b/.venv", "torch lost its CUDA build in an environment"},
		{"a newline", "/srv/a\nFAKE TITLE/.venv", `torch lost its CUDA build in /srv/a\nFAKE TITLE/.venv`},
		{"right-to-left override", "/srv/\u202evnev./.venv", `torch lost its CUDA build in /srv/\u202evnev./.venv`},
		{"an escape", "/srv/\x1b]0;x\x07/.venv", `torch lost its CUDA build in /srv/\x1b]0;x\x07/.venv`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: tc.env, Message: "torch in " + tc.env + " was replaced.", Fix: "pip install --python " + tc.env + "/bin/python torch"}
			n := Notification(e, false)
			if n.Title != tc.title {
				t.Errorf("title = %q, want %q", n.Title, tc.title)
			}
			if i := strings.IndexFunc(n.Title+n.Body, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u202e' }); i >= 0 {
				t.Errorf("a control or bidi character is left: title %q body %q", n.Title, n.Body)
			}
			if !strings.Contains(n.Body, human.Visible(tc.env)) {
				t.Errorf("body %q does not name %q", n.Body, human.Visible(tc.env))
			}
		})
	}
	// The tray's own notes too.
	for _, n := range []Note{ReportNotExported(errors.New("writing /srv/\u202eevil: denied")), CopyFailed("a\x1b[2Jb"), StartFileProblem("x\ny")} {
		if i := strings.IndexFunc(n.Body, func(r rune) bool { return r < 0x20 || r == '\u202e' }); i >= 0 {
			t.Errorf("body %q holds a control or bidi character", n.Body)
		}
	}
}

// TestEnvLabelNamesApp: the tray's line names the app whose environment
// it is beside the path.
func TestEnvLabelNamesApp(t *testing.T) {
	env := &pyenv.Env{Path: filepath.Join("x", "ComfyUI_windows_portable", "python_embeded"), App: "ComfyUI portable",
		Packages: map[string]*pyenv.Package{}}
	got := EnvLabel(monitor.EnvReport{Env: env, Verdict: monitor.VerdictOK})
	if got != "✓ ComfyUI_windows_portable/python_embeded (ComfyUI portable) — no torch" {
		t.Errorf("EnvLabel = %q", got)
	}
}

// TestRepairLabel: llama.cpp gets one click too: an environment whose
// only repairable error is llama-cpp-python's CPU build offers its
// reinstall; one with a torch error offers torch's.
func TestRepairLabel(t *testing.T) {
	llama := finding.Finding{Code: finding.CodeLlamaCPPCPUBuild, Severity: finding.SeverityError}
	cpu := finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError}
	for _, tc := range []struct {
		fs   []finding.Finding
		want string
	}{{[]finding.Finding{llama}, LabelReinstallLlama}, {[]finding.Finding{llama, cpu}, LabelReinstallTorch}, {[]finding.Finding{cpu}, LabelReinstallTorch}} {
		e := monitor.EnvReport{Findings: tc.fs}
		if got := RepairLabel(e); got != tc.want || !NeedsReinstall(e) {
			t.Errorf("%v: %q (offered %v), want %q", tc.fs, got, NeedsReinstall(e), tc.want)
		}
	}
}

// TestJobLines: the tooltip lists the running jobs, one a line, by
// their script, run time to the minute, GPUs and the busiest one's
// utilisation, the oldest TooltipJobs of them, and counts the rest.
func TestJobLines(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	pct := func(v float64) *float64 { return &v }
	jobs := []monitor.JobRun{
		{PID: 10, Command: []string{"/home/ada/.venv/bin/python", "/home/ada/work/train.py", "--lr", "3e-4"}, Started: now.Add(-75 * time.Minute), GPUs: []int{0}, GPUPercent: pct(87.4)},
		{PID: 11, Command: []string{"python", "-m", "torch.distributed.run", "ddp.py"}, Started: now.Add(-26*time.Hour - 5*time.Minute), GPUs: []int{3, 1}, GPUPercent: pct(99)},
		{PID: 12, Started: now.Add(-30 * time.Second), GPUs: []int{2}},
	}
	want := "\ntrain.py · 1h15m · GPU 0 87 %\ntorch.distributed.run · 1d2h · GPUs 1,3 99 %\nPID 12 · <1m · GPU 2"
	if got := JobLines(jobs, now); got != want {
		t.Errorf("JobLines = %q, want %q", got, want)
	}
	if got := JobLines(nil, now); got != "" {
		t.Errorf("no jobs: %q", got)
	}
	many := append(slices.Clone(jobs), monitor.JobRun{PID: 13}, monitor.JobRun{PID: 14})
	got := JobLines(many, now)
	if lines := strings.Split(strings.TrimPrefix(got, "\n"), "\n"); len(lines) != TooltipJobs+1 || lines[TooltipJobs] != "and 2 more" {
		t.Errorf("five jobs: %q", got)
	}
	s := monitor.State{Started: true, Jobs: jobs[:1]}
	if m := Model(s, now, false, nil); !strings.HasSuffix(m.Tooltip, "\ntrain.py · 1h15m · GPU 0 87 %") || !strings.HasPrefix(m.Tooltip, "GPU Canary: ") {
		t.Errorf("the model's tooltip = %q", m.Tooltip)
	}
	for d, want := range map[time.Duration]string{59 * time.Second: "<1m", 42*time.Minute + 59*time.Second: "42m", 2*time.Hour + 5*time.Minute: "2h05m", 72 * time.Hour: "3d0h"} {
		if got := RunFor(d); got != want {
			t.Errorf("RunFor(%v) = %q, want %q", d, got, want)
		}
	}
}
