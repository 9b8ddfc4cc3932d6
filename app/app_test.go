package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// fakeDesktop wraps Fyne's test app with the desktop.App tray methods it
// lacks, recording what the app sets (evebuddy's AppFake).
type fakeDesktop struct {
	fyne.App
	menu *fyne.Menu
	icon fyne.Resource
}

func (f *fakeDesktop) SetSystemTrayMenu(m *fyne.Menu)    { f.menu = m }
func (f *fakeDesktop) SetSystemTrayIcon(r fyne.Resource) { f.icon = r }
func (f *fakeDesktop) SetSystemTrayWindow(fyne.Window)   {}

const a100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "utilization_gpu_percent": 40, "processes": []}]}`

// engine starts a monitor over a good and a broken environment.
func engine(t *testing.T, scenario string) (*monitor.Monitor, []string) {
	t.Helper()
	root := t.TempDir()
	good, bad := filepath.Join(root, "good", ".venv"), filepath.Join(root, "llm", ".venv")
	if err := pyenvtest.Write(good, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
		t.Fatal(err)
	}
	if err := pyenvtest.Write(bad, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.10.0", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(root, "gpu.json")
	os.WriteFile(sim, []byte(scenario), 0o644)
	b := gpu.Open(gpu.Options{SimFile: sim})
	t.Cleanup(func() { b.Close() })
	m := monitor.New(monitor.Options{Paths: []string{good, bad}, GPU: b, Rediscover: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(5 * time.Second)
	for !m.State().Started {
		if time.Now().After(deadline) {
			t.Fatal("engine did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return m, []string{good, bad}
}

func newTestUI(t *testing.T, scenario string) (*ui, *fakeDesktop, []string, *string) {
	t.Helper()
	a := test.NewTempApp(t)
	fake := &fakeDesktop{App: a}
	m, paths := engine(t, scenario)
	tip := new(string)
	u := newUI(a, fake, Deps{Monitor: m, Tooltip: func(s string) { *tip = s }, OpenFolder: func(string) error { return nil },
		Log: nil, ConfigPath: filepath.Join(t.TempDir(), "config.toml")})
	u.render()
	return u, fake, paths, tip
}

func labels(items []*fyne.MenuItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Label)
	}
	return out
}

func TestTrayShowsVerdicts(t *testing.T) {
	u, fake, paths, tip := newTestUI(t, a100)
	if fake.icon == nil || fake.icon.Name() != "tray-error.png" {
		t.Errorf("icon = %v, want the error light", fake.icon)
	}
	if !strings.Contains(*tip, "1 GPU (simulated)") || !strings.Contains(*tip, "1 env broken") {
		t.Errorf("tooltip = %q", *tip)
	}
	got := strings.Join(labels(fake.menu.Items), "\n")
	for _, want := range []string{"✓ good/.venv — torch 2.5.1+cu121 CUDA 12.1", "✗ llm/.venv — torch 2.10.0 CPU only",
		LabelProcesses, LabelEnvs, LabelGPUs, LabelHistory, LabelReport, LabelPause, LabelSettings, LabelQuit} {
		if !strings.Contains(got, want) {
			t.Errorf("menu lacks %q:\n%s", want, got)
		}
	}
	// The broken environment's submenu copies its fix command.
	var broken *fyne.MenuItem
	for _, it := range fake.menu.Items {
		if strings.Contains(it.Label, "llm/.venv") {
			broken = it
		}
	}
	if broken == nil || broken.ChildMenu == nil {
		t.Fatal("no submenu for the broken environment")
	}
	sub := labels(broken.ChildMenu.Items)
	if strings.Join(sub, "|") != "Copy fix command|Copy activate command|Open folder|Snooze for 1 hour" {
		t.Errorf("submenu = %v", sub)
	}
	broken.ChildMenu.Items[0].Action()
	if clip := u.app.Clipboard().Content(); !strings.HasPrefix(clip, "uv pip install --python "+paths[1]) {
		t.Errorf("clipboard = %q", clip)
	}
	broken.ChildMenu.Items[1].Action()
	if clip := u.app.Clipboard().Content(); clip != "source "+filepath.Join(paths[1], "bin", "activate") {
		t.Errorf("activate = %q", clip)
	}
	// Snooze marks it, live.
	broken.ChildMenu.Items[3].Action()
	if !strings.Contains(strings.Join(labels(fake.menu.Items), "\n"), "(snoozed)") {
		t.Error("snooze is not shown")
	}
}

func TestNoDriverIcon(t *testing.T) {
	_, fake, _, tip := newTestUI(t, `{"devices": []}`)
	// The CPU torch is fine without a GPU; the light says "no driver".
	if fake.icon.Name() != "tray-nodriver.png" || !strings.Contains(*tip, "no NVIDIA driver") {
		t.Errorf("icon %s, tooltip %q", fake.icon.Name(), *tip)
	}
}

func TestWindowsOpenAndHide(t *testing.T) {
	u, fake, _, _ := newTestUI(t, a100)
	for _, label := range []string{LabelEnvs, LabelProcesses, LabelGPUs, LabelHistory, LabelSettings} {
		for _, it := range fake.menu.Items {
			if it.Label == label {
				it.Action()
			}
		}
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
	// Opening again shows the same window (closing only hides it; the
	// desktop test closes one through the window manager).
	w := titles["GPU Canary — Environments"]
	w.Hide()
	u.wins.showEnvs()
	if len(u.app.Driver().AllWindows()) != len(titles) || u.wins.envs.win != w {
		t.Error("reopening made a new window")
	}
	// The environments window shows the broken env's finding and its fix.
	u.wins.envs.selected = u.wins.envs.envs[1].Path
	u.wins.envs.showDetail()
	found := false
	for _, o := range u.wins.envs.detail.Objects {
		if lbl, ok := o.(*widget.Label); ok && strings.Contains(lbl.Text, health.CodeTorchCPUBuild) {
			found = true
		}
	}
	if !found {
		t.Error("the detail pane does not show TORCH_CPU_BUILD")
	}
}

func TestActivateCommand(t *testing.T) {
	env := &pyenv.Env{Path: "/home/u/my env/.venv", Layout: pyenv.LayoutPOSIX, Kind: "venv"}
	for _, tc := range []struct{ goos, shell, want string }{
		{"linux", "/bin/bash", "source '/home/u/my env/.venv/bin/activate'"},
		{"linux", "/usr/bin/fish", "source '/home/u/my env/.venv/bin/activate.fish'"},
		{"linux", "/bin/tcsh", "source '/home/u/my env/.venv/bin/activate.csh'"},
	} {
		if got := activateCommand(env, tc.goos, tc.shell); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.goos, tc.shell, got, tc.want)
		}
	}
	if got := activateCommand(&pyenv.Env{Path: "/opt/conda/envs/x", Kind: "conda"}, "linux", "/bin/bash"); got != "conda activate /opt/conda/envs/x" {
		t.Errorf("conda: %q", got)
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

// fakeRepairer records the plan it is asked to run.
type fakeRepairer struct {
	ran chan fix.Plan
}

func (f *fakeRepairer) Plan(env string) (fix.Plan, error) {
	return fix.Plan{Env: env, Installer: "pip", Variant: "cu124", Argv: []string{"pip"}, Packages: []fix.Pin{{Name: "torch", Version: "2.10.0+cu128"}}}, nil
}

func (f *fakeRepairer) Run(_ context.Context, p fix.Plan, line func(string)) (fix.Result, error) {
	line("Downloading torch-2.10.0+cu128-cp311-cp311-linux_x86_64.whl (900 MB)")
	f.ran <- p
	return fix.Result{Fixed: true, After: map[string]string{"torch": "2.10.0+cu128"}}, nil
}

func TestReinstallFromTheTray(t *testing.T) {
	u, fake, paths, _ := newTestUI(t, a100)
	rep := &fakeRepairer{ran: make(chan fix.Plan, 1)}
	u.d.Repair = rep
	u.shownMenu = nil
	u.render()
	var broken *fyne.MenuItem
	for _, it := range fake.menu.Items {
		if strings.Contains(it.Label, "llm/.venv") {
			broken = it
		}
	}
	if broken == nil || broken.ChildMenu.Items[0].Label != "Reinstall CUDA torch…" {
		t.Fatalf("no reinstall entry: %v", labels(broken.ChildMenu.Items))
	}
	for _, it := range fake.menu.Items {
		if strings.Contains(it.Label, "good/.venv") && it.ChildMenu.Items[0].Label == "Reinstall CUDA torch…" {
			t.Error("a healthy environment offers a reinstall")
		}
	}
	p, _ := rep.Plan(paths[1])
	finished := u.runRepair(p, u.wins.host())
	select {
	case got := <-rep.ran:
		if got.Env != paths[1] {
			t.Errorf("ran %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the repair did not run")
	}
	<-finished // the result dialog is shown before the next test renders

}
