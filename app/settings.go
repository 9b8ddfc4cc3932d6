package app

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/autostart"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// notifyKinds are the event kinds a user may turn notifications on or off for.
var notifyKinds = []string{
	string(monitor.KindCUDAWheelReplaced), string(monitor.KindTorchChanged), string(monitor.KindTorchRemoved),
	string(monitor.KindJobOnCPU), string(monitor.KindJobOnCPUCleared), string(monitor.KindFindingRaised),
	string(monitor.KindFindingCleared), string(monitor.KindGPUStateChanged),
}

// settingsForm is the Settings window's form over monitor/config's file
// (the one the command line reads), so the tray and the CLI agree.
type settingsForm struct {
	base                                         config.Config
	roots, envs, refresh, percent, window, index *widget.Entry
	home, login                                  *widget.Check
	kinds                                        *widget.CheckGroup
	form                                         *widget.Form
}

func newSettingsForm(cfg config.Config) *settingsForm {
	f := &settingsForm{base: cfg,
		roots: widget.NewMultiLineEntry(), envs: widget.NewMultiLineEntry(),
		refresh: widget.NewEntry(), percent: widget.NewEntry(), window: widget.NewEntry(), index: widget.NewEntry(),
		home:  widget.NewCheck("Also search my home folder", nil),
		login: widget.NewCheck("Start GPU Canary when I log in", nil),
		kinds: widget.NewCheckGroup(notifyKinds, nil)}
	f.roots.SetText(strings.Join(cfg.Roots, "\n"))
	f.envs.SetText(strings.Join(cfg.Envs, "\n"))
	f.refresh.SetText(cfg.Refresh.String())
	f.percent.SetText(strconv.FormatFloat(cfg.CPUFallbackPercent, 'f', -1, 64))
	f.window.SetText(cfg.CPUFallbackWindow.String())
	f.index.SetText(cfg.IndexBase)
	f.home.SetChecked(cfg.DiscoverHome)
	if len(cfg.Notify) == 0 {
		f.kinds.SetSelected(notifyKinds)
	} else {
		f.kinds.SetSelected(slices.DeleteFunc(slices.Clone(cfg.Notify), func(k string) bool { return !slices.Contains(notifyKinds, k) }))
	}
	f.login.SetChecked(autostart.Enabled())
	f.form = widget.NewForm(
		widget.NewFormItem("Folders to search", f.roots),
		widget.NewFormItem("", f.home),
		widget.NewFormItem("Environments added by hand", f.envs),
		widget.NewFormItem("Refresh interval", f.refresh),
		widget.NewFormItem("CPU fallback: busy above (% of a core)", f.percent),
		widget.NewFormItem("CPU fallback: for at least", f.window),
		widget.NewFormItem("PyTorch index base (mirror)", f.index),
		widget.NewFormItem("Notify about", f.kinds),
		widget.NewFormItem("", f.login),
	)
	f.form.SubmitText = "Save"
	return f
}

// config is the form's content as a config, every field validated.
func (f *settingsForm) config() (config.Config, error) {
	c, err := parseSettings(f.base, f.roots.Text, f.envs.Text, f.refresh.Text, f.percent.Text, f.window.Text, f.index.Text, f.kinds.Selected)
	c.DiscoverHome = f.home.Checked
	return c, err
}

// showSettings edits the settings file shared with the command line; the
// engine, watching that file, applies what changed at once.
func (w *windows) showSettings() {
	if w.settings == nil {
		w.settings = w.newWindow("GPU Canary — Settings", fyne.NewSize(640, 600))
	}
	f := newSettingsForm(w.u.d.Config)
	f.form.OnSubmit = func() {
		next, err := f.config()
		if err != nil {
			dialog.ShowError(err, w.settings)
			return
		}
		if f.login.Checked != autostart.Enabled() {
			if err := autostart.Set(f.login.Checked); err != nil {
				dialog.ShowError(fmt.Errorf("start at login: %w", err), w.settings)
				return
			}
		}
		if !w.saveConfig(next) {
			return
		}
		w.hide(w.settings)
	}
	f.form.OnCancel = func() { w.hide(w.settings) }
	w.settingsForm = f
	w.settings.SetContent(container.NewVScroll(f.form))
	w.show(w.settings)
}

// parseSettings reads the form into a config, validating every field.
func parseSettings(base config.Config, roots, envs, refresh, percent, window, index string, kinds []string) (config.Config, error) {
	c := base
	c.Roots, c.Envs = lines(roots), lines(envs)
	d, err := time.ParseDuration(strings.TrimSpace(refresh))
	if err != nil || d < 100*time.Millisecond {
		return base, fmt.Errorf("refresh interval %q: give a duration of at least 100ms, like 2s", refresh)
	}
	c.Refresh = config.Duration{Duration: d}
	p, err := strconv.ParseFloat(strings.TrimSpace(percent), 64)
	if err != nil || p <= 0 {
		return base, fmt.Errorf("CPU fallback threshold %q: give a number above 0, like 50", percent)
	}
	c.CPUFallbackPercent = p
	wd, err := time.ParseDuration(strings.TrimSpace(window))
	if err != nil || wd < 0 {
		return base, fmt.Errorf("CPU fallback window %q: give a duration, like 20s", window)
	}
	c.CPUFallbackWindow = config.Duration{Duration: wd}
	idx := strings.TrimSpace(index)
	if !strings.HasPrefix(idx, "http://") && !strings.HasPrefix(idx, "https://") {
		return base, fmt.Errorf("index base %q: give an http(s) URL, like https://download.pytorch.org/whl", index)
	}
	c.IndexBase = strings.TrimRight(idx, "/")
	c.Notify = nil
	if len(kinds) < len(notifyKinds) {
		c.Notify = slices.Clone(kinds)
		if len(c.Notify) == 0 {
			c.Notify = []string{"NONE"}
		}
	}
	return c, nil
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
