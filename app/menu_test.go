package app

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestModel checks the tray model as a pure function of the engine's
// state: no display is involved.
func TestModel(t *testing.T) {
	s := goldenState()
	noDriver := monitor.State{Started: true, GPU: gpu.State{}}
	for _, tc := range []struct {
		name          string
		s             monitor.State
		paused        bool
		snoozed       string
		icon, tooltip string
		envs          []string
	}{
		{"before the engine's first read", monitor.State{}, false, "", monitor.OverallHealthy, "GPU Canary: starting…", nil},
		{"a broken environment", s, false, "", monitor.OverallError, "GPU Canary: 1 GPU (simulated) · 1 job on GPU · 1 job on CPU · 2 envs · 1 env broken",
			[]string{"✓ vision/.venv — torch 2.5.1+cu121 CUDA 12.1", "✗ llm/.venv — torch 2.10.0 CPU only"}},
		{"snoozed and paused", s, true, "/home/ada/work/llm/.venv", monitor.OverallError, "", nil},
		{"no driver, no environment", noDriver, false, "", monitor.OverallNoDriver, "GPU Canary: no NVIDIA driver · 0 envs", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model(tc.s, tc.paused, func(env string) bool { return env == tc.snoozed })
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

// TestStartingMenu: before the engine's first State the menu says
// "starting…" and offers no "Add environment…" yet.
func TestStartingMenu(t *testing.T) {
	a := test.NewTempApp(t)
	fake := &fakeDesktop{App: a}
	u := newUI(a, fake, Deps{Monitor: monitor.New(monitor.Options{}), Tooltip: func(string) {}})
	u.render()
	got := labels(fake.menu.Items)
	if got[0] != "GPU Canary is starting…" || strings.Contains(strings.Join(got, "\n"), "Add environment") {
		t.Errorf("menu while starting: %q", got)
	}
	if fake.icon == nil {
		t.Error("no tray icon while starting")
	}
}
