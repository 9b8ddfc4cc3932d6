package tray

import (
	"context"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// watchSettings sends the settings each time the file changes to
// something valid and new; a file with an error is told once and the
// settings in use stay. The channel is nil when nothing can be watched.
func (t *tray) watchSettings(ctx context.Context) <-chan config.Config {
	if t.d.ConfigPath == "" || t.d.Reconfigure == nil {
		return nil
	}
	ch, err := config.Watch(ctx, t.d.ConfigPath, func(err error) {
		t.tell(settingsErrorTitle, err.Error()+". The settings in use stay until it is mended.")
		t.do(func() {
			t.settingsErr = err.Error()
			t.render()
		})
	})
	if err != nil {
		t.d.Log.Warn("settings changes apply at the next start", "err", err)
		return nil
	}
	return ch
}

// settingsErrorTitle is the notification's title for a settings file
// with an error.
const settingsErrorTitle = "The settings file has an error"

// tellStartProblems tells, once the tray is up, what is wrong with the
// files it was started with: the settings file (the defaults are in use
// until it is mended) and the others (a GPU scenario file).
func (t *tray) tellStartProblems() {
	if t.settingsErr != "" {
		t.tell(settingsErrorTitle, t.settingsErr+". GPU Canary runs with the default settings until it is mended.")
	}
	for _, p := range t.d.Problems {
		t.tell("GPU Canary was started with a file it cannot use", p+".")
	}
}
