package tray

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// settleSettings is how long the settings file must be quiet before it is
// read: editors write in several steps.
const settleSettings = 200 * time.Millisecond

// watchSettings sends the settings each time the file changes to
// something valid and new; a file with an error is told once and the
// settings in use stay. The channel is nil when nothing can be watched.
func (t *tray) watchSettings(ctx context.Context) <-chan config.Config {
	path := t.d.ConfigPath
	if path == "" || t.d.Reconfigure == nil {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.d.Log.Warn("settings changes apply at the next start", "err", err)
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		err = w.Add(dir)
	}
	if err != nil {
		t.d.Log.Warn("settings changes apply at the next start: cannot watch the settings folder", "dir", dir, "err", err)
		if w != nil {
			w.Close()
		}
		return nil
	}
	out := make(chan config.Config)
	last, _ := config.Load(path)
	go func() {
		defer w.Close()
		var settle <-chan time.Time
		var lastErr string
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == filepath.Clean(path) {
					settle = time.After(settleSettings)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				t.d.Log.Warn("watching the settings file", "err", err)
			case <-settle:
				settle = nil
				cfg, err := config.Load(path)
				if err != nil {
					if err.Error() != lastErr {
						lastErr = err.Error()
						t.tell("The settings file has an error", err.Error()+". The settings in use stay until it is mended.")
					}
					continue
				}
				lastErr = ""
				if reflect.DeepEqual(cfg, last) {
					continue
				}
				last = cfg
				select {
				case out <- cfg:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}
