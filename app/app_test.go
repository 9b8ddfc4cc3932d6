package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

const a100 = presenttest.A100

// engine starts a monitor over a good and a broken environment.
func engine(t *testing.T, scenario string) (Engine, []string) {
	return presenttest.Engine(t, scenario)
}

// testUI is the windows process's ui over a real engine, with what it
// copies and its idle calls recorded.
type testUI struct {
	*ui
	paths []string
	clip  *string
	idle  *[]int
}

func newTestUI(t *testing.T, scenario string) testUI {
	t.Helper()
	a := test.NewTempApp(t)
	m, paths := engine(t, scenario)
	clip, idle := new(string), new([]int)
	u := newUI(a, Deps{Engine: m, OpenFolder: func(string) error { return nil },
		Clipboard: func(s string) { *clip = s }, OnIdle: func(n int) { *idle = append(*idle, n) },
		ConfigPath: filepath.Join(t.TempDir(), "config.toml")})
	u.render()
	return testUI{u, paths, clip, idle}
}

// TestWindowsOpenAndHide opens every window the tray can ask for, then
// closes them: the process says it is idle only when the last one closes,
// counting the requests it handled.
func TestWindowsOpenAndHide(t *testing.T) {
	monitortest.UVOnPath(t)
	u := newTestUI(t, a100)
	for _, show := range []string{link.ShowEnvs, link.ShowProcesses, link.ShowGPUs, link.ShowHistory, link.ShowSettings} {
		u.handle(link.Request{Show: show})
	}
	titles := map[string]fyne.Window{}
	for _, w := range u.app.Driver().AllWindows() {
		titles[w.Title()] = w
	}
	for _, want := range []string{"GPU Canary — Environments", "GPU Canary — GPU processes", "GPU Canary — GPUs", "GPU Canary — Event history", "GPU Canary — Settings"} {
		if titles[want] == nil {
			t.Errorf("window %q did not open; have %v", want, titles)
		}
	}
	// Opening again shows the same window.
	w := titles["GPU Canary — Environments"]
	u.wins.hide(w)
	u.handle(link.Request{Show: link.ShowEnvs})
	if len(u.app.Driver().AllWindows()) != len(titles) || u.wins.envs.win != w {
		t.Error("reopening made a new window")
	}
	// The environments window shows the broken env's finding, and its
	// copy button hands the fix command to the clipboard.
	u.wins.envs.selected = u.wins.envs.envs[1].Path
	u.wins.envs.showDetail()
	found := false
	for _, o := range u.wins.envs.detail.Objects {
		if lbl, ok := o.(*widget.Label); ok && strings.Contains(lbl.Text, finding.CodeTorchCPUBuild) {
			found = true
		}
	}
	if !found {
		t.Error("the detail pane does not show TORCH_CPU_BUILD")
	}
	test.Tap(find(u.wins.envs.detail, func(o fyne.CanvasObject) bool {
		b, ok := o.(*widget.Button)
		return ok && b.Text == "Copy fix command"
	}).(*widget.Button))
	if !strings.Contains(*u.clip, "uv pip install --python "+u.paths[1]) {
		t.Errorf("copied %q", *u.clip)
	}

	for _, win := range u.app.Driver().AllWindows() {
		if len(*u.idle) > 0 {
			t.Fatalf("idle with %d windows still open", u.wins.open())
		}
		u.wins.hide(win)
	}
	if len(*u.idle) != 1 || (*u.idle)[0] != 6 {
		t.Errorf("idle calls %v, want one after 6 requests", *u.idle)
	}
	// A request that opens nothing leaves the process idle at once.
	u.handle(link.Request{Show: "no-such-window"})
	if len(*u.idle) != 2 || (*u.idle)[1] != 7 {
		t.Errorf("idle calls %v after an unknown request", *u.idle)
	}
}

func TestParseSettings(t *testing.T) {
	base := config.Default()
	c, err := parseSettings(base, "/data\n\n /work ", "", "3s", "75", "30s", "https://mirror.example/whl/", notifyKinds[:2])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Roots) != 2 || c.Roots[1] != "/work" || c.Refresh.Duration != 3*time.Second || c.CPUFallbackPercent != 75 ||
		c.IndexBase != "https://mirror.example/whl" || len(c.Notify) != 2 {
		t.Errorf("config = %+v", c)
	}
	for _, bad := range [][]string{{"x", "50", "20s", "https://a"}, {"2s", "-1", "20s", "https://a"}, {"2s", "50", "x", "https://a"}, {"2s", "50", "20s", "ftp://a"}} {
		if _, err := parseSettings(base, "", "", bad[0], bad[1], bad[2], bad[3], nil); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

// TestParseJobTimes: the Settings window's job run time, stall window
// and how long a job runs before a stall is watched for reach the
// config, and what the settings file would refuse is refused.
func TestParseJobTimes(t *testing.T) {
	c, err := parseJobTimes(config.Default(), " 90s", "2m", "30s ")
	if err != nil || c.JobMinRuntime.Duration != 90*time.Second || c.StallWindow.Duration != 2*time.Minute || c.StallArmAfter.Duration != 30*time.Second {
		t.Errorf("config = %v %v %v, %v", c.JobMinRuntime, c.StallWindow, c.StallArmAfter, err)
	}
	for _, bad := range [][3]string{{"0s", "10m", "5m"}, {"x", "10m", "5m"}, {"5m", "10ms", "5m"}, {"5m", "", "5m"}, {"5m", "10m", "0s"}, {"5m", "10m", "-1m"}, {"5m", "10m", ""}} {
		if _, err := parseJobTimes(config.Default(), bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

// fakeRepairer records the plan it is asked to run.
type fakeRepairer struct {
	ran     chan fixplan.Plan
	release chan struct{} // Run returns when it is closed
	// deaf makes Run ignore its context, like an installer that does not stop.
	deaf bool
	// inUse is what InUse answers (nil: no process runs from the
	// environment); anyway records the runs that were RunAnyway.
	inUse  error
	anyway []bool
	// result, when set, is what Run returns once released.
	result *fixjournal.Result
}

func (f *fakeRepairer) InUse(context.Context, string) error { return f.inUse }

func (f *fakeRepairer) RunAnyway(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error) {
	f.anyway = append(f.anyway, true)
	return f.Run(ctx, p, line)
}

func (f *fakeRepairer) Plan(_ context.Context, env string) (fixplan.Plan, error) {
	return fixplan.Plan{Env: env, Installer: "pip", Variant: "cu128", CUDA: "12.8", Index: "https://download.pytorch.org/whl/cu128",
		Argv:     []string{env + "/bin/python", "-m", "pip", "install", "--force-reinstall", "--no-deps", "torch==2.10.0+cu128", "--index-url", "https://download.pytorch.org/whl/cu128"},
		Packages: []fixplan.Pin{{Name: "torch", Version: "2.10.0+cu128"}}, Reasons: []string{"torch 2.10.0 is a CPU build", "the driver runs CUDA 12.8"}}, nil
}

func (f *fakeRepairer) Run(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error) {
	line("Downloading torch-2.10.0+cu128-cp311-cp311-linux_x86_64.whl (900 MB)")
	f.ran <- p
	cancelled := ctx.Done()
	if f.deaf {
		cancelled = nil
	}
	select {
	case <-f.release:
	case <-cancelled:
		return fixjournal.Result{Why: "cancelled"}, errors.New("the installer was cancelled and stopped")
	}
	if f.result != nil {
		return *f.result, nil
	}
	return fixjournal.Result{Fixed: true, After: map[string]string{"torch": "2.10.0+cu128"}}, nil
}

// TestReinstallRequest is the tray's "Reinstall CUDA torch…": the plan
// is shown on the Environments window, and the process stays while the
// installer runs, even with every window closed.
func TestReinstallRequest(t *testing.T) {
	u := newTestUI(t, a100)
	rep := &fakeRepairer{ran: make(chan fixplan.Plan, 1), release: make(chan struct{})}
	u.d.Repair = rep
	u.handle(link.Request{Repair: u.paths[1]})
	if u.wins.envs == nil || u.wins.open() != 1 {
		t.Fatal("the plan is not shown on the Environments window")
	}
	p, _ := rep.Plan(context.Background(), u.paths[1])
	finished := u.runRepair(p, u.wins.host(), false)
	var got fixplan.Plan
	select {
	case got = <-rep.ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the repair did not run")
	}
	if got.Env != u.paths[1] {
		t.Errorf("ran %+v", got)
	}
	u.wins.hide(u.wins.envs.win)
	if len(*u.idle) != 0 {
		t.Fatal("idle while the installer runs: ending the process would kill it")
	}
	close(rep.release)
	<-finished
	if len(*u.idle) != 1 {
		t.Errorf("idle calls after the repair ended with no window open: %v", *u.idle)
	}
}

// TestQuitStopsARepair quits while an installer runs: the installer is
// cancelled and shutdown waits for it, but only a bounded while.
func TestQuitStopsARepair(t *testing.T) {
	u := newTestUI(t, a100)
	var logged bytes.Buffer
	u.d.Log = slog.New(slog.NewTextHandler(&logged, nil))
	rep := &fakeRepairer{ran: make(chan fixplan.Plan, 1), release: make(chan struct{})}
	u.d.Repair = rep
	p, _ := rep.Plan(context.Background(), u.paths[1])
	finished := u.runRepair(p, u.wins.host(), false)
	<-rep.ran
	u.stopRepairs()
	select {
	case <-finished:
	default:
		t.Fatal("shutdown returned while the repair was still running")
	}
	if !strings.Contains(logged.String(), "reinstall stopped as GPU Canary quit") || !strings.Contains(logged.String(), "cancelled") {
		t.Errorf("the log does not keep the stopped repair: %s", logged.String())
	}

	// An installer that does not stop does not hold shutdown for ever.
	deaf := newTestUI(t, a100)
	rep = &fakeRepairer{ran: make(chan fixplan.Plan, 1), release: make(chan struct{}), deaf: true}
	deaf.d.Repair = rep
	defer close(rep.release)
	deaf.runRepair(p, deaf.wins.host(), false)
	<-rep.ran
	old := stopRepairsWait
	stopRepairsWait = 100 * time.Millisecond
	defer func() { stopRepairsWait = old }()
	returned := make(chan struct{})
	go func() { deaf.stopRepairs(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown waited for an installer that does not stop")
	}
}

// TestProblemsAreShownOverTheFirstWindow: what is wrong with the files
// the windows process was started with is shown in a dialog over the
// first window opened, once.
func TestProblemsAreShownOverTheFirstWindow(t *testing.T) {
	u := newTestUI(t, a100)
	u.d.Problems = []string{"reading settings /home/ada/.config/gpucanary/config.toml: refresh \"soon\" is not a duration"}
	u.handle(link.Request{Show: link.ShowGPUs})
	win := u.wins.gpus.win
	top := win.Canvas().Overlays().Top()
	if top == nil || find(top, func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		if !ok {
			return false
		}
		text := strings.ReplaceAll(l.Text, "\n", " ")
		return strings.Contains(text, "config.toml") && strings.Contains(text, "soon")
	}) == nil {
		t.Fatal("no dialog naming the settings file over the GPUs window")
	}
	test.Tap(dialogButton(t, win, "OK"))
	u.handle(link.Request{Show: link.ShowEnvs})
	if u.wins.envs.win.Canvas().Overlays().Top() != nil {
		t.Error("the problems were shown twice")
	}
}

// TestAddEnvironmentRefusesAFolderThatIsNotOne: "Add environment…" on a
// plain folder says so in a dialog and saves nothing; before, the folder
// was saved in the settings without a word.
func TestAddEnvironmentRefusesAFolderThatIsNotOne(t *testing.T) {
	u := newTestUI(t, a100)
	u.d.Config = config.Default()
	plain := t.TempDir()
	u.wins.addPath(plain)
	win := u.wins.host()
	top := win.Canvas().Overlays().Top()
	if top == nil || find(top, func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		if !ok {
			return false
		}
		text := strings.ReplaceAll(l.Text, "\n", " ")
		return strings.Contains(text, "not a Python environment") && strings.Contains(text, "Nothing was added")
	}) == nil {
		t.Fatal("no dialog saying the folder is not an environment")
	}
	if _, err := os.Stat(u.d.ConfigPath); !errors.Is(err, os.ErrNotExist) || len(u.d.Config.Envs) != 0 {
		t.Errorf("the folder was saved: %v, envs %v", err, u.d.Config.Envs)
	}

	// An environment is saved and watched.
	env := u.paths[0]
	u.wins.addPath(env)
	c, err := config.Load(u.d.ConfigPath)
	if err != nil || len(c.Envs) != 1 || c.Envs[0] != env {
		t.Errorf("saved %v, %v", c.Envs, err)
	}
}

// nothingToFix is a repairer whose environment was mended since the
// menu offered the reinstall.
type nothingToFix struct{ fakeRepairer }

func (nothingToFix) Plan(_ context.Context, env string) (fixplan.Plan, error) {
	return fixplan.Plan{}, fmt.Errorf("%w in %s: torch 2.5.1+cu124 (CUDA 12.4) raises none of the findings a CUDA torch reinstall fixes on this machine", fix.ErrNothingToFix, env)
}

// TestReinstallOfAHealthyEnvironment: a reinstall asked for an
// environment with nothing to fix says so, and asks nothing.
func TestReinstallOfAHealthyEnvironment(t *testing.T) {
	u := newTestUI(t, a100)
	u.d.Repair = &nothingToFix{}
	u.handle(link.Request{Repair: u.paths[0]})
	top := u.wins.host().Canvas().Overlays().Top()
	if top == nil || find(top, func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		return ok && strings.Contains(strings.ReplaceAll(l.Text, "\n", " "), "Nothing to fix in "+u.paths[0])
	}) == nil {
		t.Fatal("no dialog saying there is nothing to fix")
	}
	if find(top, func(o fyne.CanvasObject) bool { b, ok := o.(*widget.Button); return ok && b.Text == "Yes" }) != nil {
		t.Error("the dialog asks to reinstall")
	}
}

// TestNotFixedExplainsItself: the windows' "Not fixed" quotes the
// installer's own error lines, and offers a rollback only when the run
// gave one (it changed something).
func TestNotFixedExplainsItself(t *testing.T) {
	failed := fixjournal.Result{Why: "the installer failed with exit status 1", Before: map[string]string{"torch": "2.5.1+cpu"},
		After: map[string]string{"torch": "2.5.1+cpu"}, Cause: []string{"ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"},
		Journal: "/state/journal/x.jsonl"}
	text := notFixedText(failed)
	for _, want := range []string{"Not fixed: the installer failed with exit status 1.", "The installer said:", "No space left on device"} {
		if !strings.Contains(strings.ReplaceAll(text, "\n", " "), want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "put back") {
		t.Errorf("a rollback is offered with none given:\n%s", text)
	}
	failed.Rollback = "pip install torch==2.5.1+cpu --index-url https://download.pytorch.org/whl/cpu"
	failed.After = map[string]string{}
	if text := notFixedText(failed); !strings.Contains(text, "Before the repair: torch 2.5.1+cpu.") || strings.Contains(text, failed.Rollback) || strings.Contains(text, "x.jsonl") {
		t.Errorf("the text names no versions before, or a command or a path (its buttons Undo and Show log do that):\n%s", text)
	}
}

// TestAddEnvironmentTakesAProjectFolder: "Add environment…" accepts what
// the command line accepts: a uv project folder adds the .venv its
// manager uses.
func TestAddEnvironmentTakesAProjectFolder(t *testing.T) {
	u := newTestUI(t, a100)
	u.d.Config = config.Default()
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "pyproject.toml"), []byte("[project]\nname = \"demo\"\nversion = \"0.1.0\"\ndependencies = [\"torch\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "uv.lock"), []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(project, ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	u.wins.addPath(project)
	c, err := config.Load(u.d.ConfigPath)
	if err != nil || !slices.Contains(c.Envs, venv) {
		t.Errorf("adding the project saved %v (%v), want its .venv %s", c.Envs, err, venv)
	}
}
