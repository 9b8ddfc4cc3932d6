package tray

import (
	"context"

	"github.com/gpucanary/gpucanary/app/present"
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
		t.tell(present.SettingsFileError(err))
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

// tellStartProblems tells, once the tray is up, what is wrong with the
// files it was started with: the settings file (the defaults are in use
// until it is mended) and the others (a GPU scenario file).
func (t *tray) tellStartProblems() {
	if t.settingsErr != "" {
		t.tell(present.SettingsFileAtStart(t.settingsErr))
	}
	for _, p := range t.d.Problems {
		t.tell(present.StartFileProblem(p))
	}
}
