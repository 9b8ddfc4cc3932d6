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

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// notifyKinds are the event kinds a user may turn notifications on or off for.
var notifyKinds = []string{
	monitor.KindCUDAWheelReplaced, monitor.KindTorchChanged, monitor.KindTorchRemoved,
	monitor.KindJobOnCPU, monitor.KindJobOnCPUCleared, monitor.KindFindingRaised,
	monitor.KindFindingCleared, monitor.KindGPUStateChanged,
}

// showSettings edits the settings file shared with the command line.
// Changes to roots and intervals apply at the next start; notification
// kinds apply at once.
func (w *windows) showSettings() {
	if w.settings == nil {
		w.settings = w.newWindow("GPU Canary — Settings", fyne.NewSize(640, 560))
	}
	cfg := w.u.d.Config
	roots := widget.NewMultiLineEntry()
	roots.SetText(strings.Join(cfg.Roots, "\n"))
	envs := widget.NewMultiLineEntry()
	envs.SetText(strings.Join(cfg.Envs, "\n"))
	refresh := widget.NewEntry()
	refresh.SetText(cfg.Refresh.String())
	percent := widget.NewEntry()
	percent.SetText(strconv.FormatFloat(cfg.CPUFallbackPercent, 'f', -1, 64))
	window := widget.NewEntry()
	window.SetText(cfg.CPUFallbackWindow.String())
	index := widget.NewEntry()
	index.SetText(cfg.IndexBase)
	kinds := widget.NewCheckGroup(notifyKinds, nil)
	if len(cfg.Notify) == 0 {
		kinds.SetSelected(notifyKinds)
	} else {
		kinds.SetSelected(cfg.Notify)
	}
	login := widget.NewCheck("Start GPU Canary when I log in", nil)
	login.SetChecked(autostartEnabled())

	form := widget.NewForm(
		widget.NewFormItem("Folders to search", roots),
		widget.NewFormItem("Environments added by hand", envs),
		widget.NewFormItem("Refresh interval", refresh),
		widget.NewFormItem("CPU fallback: busy above (% of a core)", percent),
		widget.NewFormItem("CPU fallback: for at least", window),
		widget.NewFormItem("PyTorch index base (mirror)", index),
		widget.NewFormItem("Notify about", kinds),
		widget.NewFormItem("", login),
	)
	form.SubmitText = "Save"
	form.OnSubmit = func() {
		next, err := parseSettings(cfg, roots.Text, envs.Text, refresh.Text, percent.Text, window.Text, index.Text, kinds.Selected)
		if err != nil {
			dialog.ShowError(err, w.settings)
			return
		}
		if err := setAutostart(login.Checked); err != nil {
			dialog.ShowError(fmt.Errorf("start at login: %w", err), w.settings)
			return
		}
		w.saveConfig(next)
		w.u.d.Monitor.Policy().SetKinds(next.Notify)
		w.settings.Hide()
	}
	form.OnCancel = w.settings.Hide
	w.settings.SetContent(container.NewVScroll(form))
	w.settings.Show()
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
