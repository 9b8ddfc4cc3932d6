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
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/autostart"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// notifyKinds are the codes of the event kinds a user may turn
// notifications on or off for (the settings file holds codes; the form
// shows present.KindName).
var notifyKinds = func() []string {
	var out []string
	for _, k := range present.NotifyKinds() {
		out = append(out, string(k))
	}
	return out
}()

// settingsSize is the size the Settings window opens at.
var settingsSize = fyne.NewSize(760, 640)

// settingsForm is the Settings window's form over monitor/config's file
// (the one the command line reads), so the tray and the CLI agree.
type settingsForm struct {
	base                                         config.Config
	roots, envs, refresh, percent, window, index *widget.Entry
	// jobMin, stall and arm are job_min_runtime, stall_window and
	// stall_arm_after.
	jobMin, stall, arm *widget.Entry
	home, login, learn *widget.Check
	// kinds are the notification kinds' checks, by code, in notifyKinds' order.
	kinds        map[string]*widget.Check
	form         *widget.Form
	save, cancel *widget.Button
	content      fyne.CanvasObject
}

func newSettingsForm(cfg config.Config) *settingsForm {
	f := &settingsForm{base: cfg,
		roots: widget.NewMultiLineEntry(), envs: widget.NewMultiLineEntry(),
		refresh: widget.NewEntry(), percent: widget.NewEntry(), window: widget.NewEntry(), index: widget.NewEntry(),
		jobMin: widget.NewEntry(), stall: widget.NewEntry(), arm: widget.NewEntry(),
		home:  widget.NewCheck("Also search my home folder", nil),
		login: widget.NewCheck("Start GPU Canary when I log in", nil),
		learn: widget.NewCheck("Learn of new torch releases from the PyTorch index (once a day)", nil),
		kinds: map[string]*widget.Check{}}
	f.roots.SetPlaceHolder("one folder per line")
	f.envs.SetPlaceHolder("one environment per line")
	f.roots.SetText(strings.Join(cfg.Roots, "\n"))
	f.envs.SetText(strings.Join(cfg.Envs, "\n"))
	f.refresh.SetText(cfg.Refresh.String())
	f.percent.SetText(strconv.FormatFloat(cfg.CPUFallbackPercent, 'f', -1, 64))
	f.window.SetText(cfg.CPUFallbackWindow.String())
	f.index.SetText(cfg.IndexBase)
	f.jobMin.SetText(cfg.JobMinRuntime.String())
	f.stall.SetText(cfg.StallWindow.String())
	f.arm.SetText(cfg.StallArmAfter.String())
	f.home.SetChecked(cfg.DiscoverHome)
	f.learn.SetChecked(cfg.KBRefresh)
	checks := make([]fyne.CanvasObject, 0, len(notifyKinds))
	for _, k := range notifyKinds {
		c := widget.NewCheck(present.KindName(monitor.Kind(k)), nil)
		c.SetChecked(len(cfg.Notify) == 0 || slices.Contains(cfg.Notify, k))
		f.kinds[k] = c
		checks = append(checks, c)
	}
	f.login.SetChecked(autostart.Enabled())
	f.form = widget.NewForm(
		widget.NewFormItem("Folders to search", f.roots),
		widget.NewFormItem("", f.home),
		widget.NewFormItem("Environments added by hand", f.envs),
		widget.NewFormItem("Refresh every", f.refresh),
		widget.NewFormItem("Job on the CPU: busy above", container.NewBorder(nil, nil, nil, widget.NewLabel("% of one core"), f.percent)),
		widget.NewFormItem("for at least", f.window),
		widget.NewFormItem("Job ended: tell if it ran", container.NewBorder(nil, nil, widget.NewLabel("at least"), nil, f.jobMin)),
		widget.NewFormItem("Job stalled: its GPU idle", container.NewBorder(nil, nil, widget.NewLabel("for"), nil, f.stall)),
		widget.NewFormItem("after it computed", container.NewBorder(nil, nil, widget.NewLabel("for"), nil, f.arm)),
		widget.NewFormItem("PyTorch index (mirror)", f.index),
		widget.NewFormItem("", f.learn),
		widget.NewFormItem("Starting", f.login),
		widget.NewFormItem("Notify about", container.NewGridWithColumns(2, checks...)),
	)
	// Save and Cancel stay in view below the form, which scrolls.
	f.save = widget.NewButton("Save", nil)
	f.save.Importance = widget.HighImportance
	f.cancel = widget.NewButton("Cancel", nil)
	// The fields end short of the scroll bar.
	form := container.New(layout.NewCustomPaddedLayout(0, 0, 0, 2*theme.Padding()), f.form)
	f.content = container.NewBorder(nil, container.NewHBox(layout.NewSpacer(), f.cancel, f.save), nil, nil, container.NewVScroll(form))
	return f
}

// selectedKinds are the codes of the kinds checked, in notifyKinds' order.
func (f *settingsForm) selectedKinds() []string {
	var out []string
	for _, k := range notifyKinds {
		if f.kinds[k].Checked {
			out = append(out, k)
		}
	}
	return out
}

// config is the form's content as a config, every field validated.
func (f *settingsForm) config() (config.Config, error) {
	c, err := parseSettings(f.base, f.roots.Text, f.envs.Text, f.refresh.Text, f.percent.Text, f.window.Text, f.index.Text, f.selectedKinds())
	if err != nil {
		return c, err
	}
	if c, err = parseJobTimes(c, f.jobMin.Text, f.stall.Text, f.arm.Text); err != nil {
		return f.base, err
	}
	c.DiscoverHome = f.home.Checked
	c.KBRefresh = f.learn.Checked
	return c, nil
}

// parseJobTimes reads job_min_runtime, stall_window and stall_arm_after
// from the form into c, refusing what the settings file would refuse.
func parseJobTimes(c config.Config, jobMin, stall, arm string) (config.Config, error) {
	m, err := time.ParseDuration(strings.TrimSpace(jobMin))
	if err != nil || m <= 0 {
		return c, fmt.Errorf("job run time %q: give a duration above 0, like 5m", jobMin)
	}
	s, err := time.ParseDuration(strings.TrimSpace(stall))
	if err != nil || s < 100*time.Millisecond {
		return c, fmt.Errorf("stall window %q: give a duration of at least 100ms, like 10m", stall)
	}
	a, err := time.ParseDuration(strings.TrimSpace(arm))
	if err != nil || a <= 0 {
		return c, fmt.Errorf("a job is watched for a stall after it computed for %q: give a duration above 0, like 5m", arm)
	}
	c.JobMinRuntime, c.StallWindow, c.StallArmAfter = config.Duration{Duration: m}, config.Duration{Duration: s}, config.Duration{Duration: a}
	return c, nil
}

// showSettings edits the settings file shared with the command line; the
// engine, watching that file, applies what changed at once.
func (w *windows) showSettings() {
	if w.settings == nil {
		w.settings = w.newWindow("GPU Canary — Settings", settingsSize)
	}
	f := newSettingsForm(w.u.d.Config)
	f.save.OnTapped = func() {
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
	f.cancel.OnTapped = func() { w.hide(w.settings) }
	w.settingsForm = f
	w.settings.SetContent(f.content)
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
			c.Notify = []string{config.NotifyNone}
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
