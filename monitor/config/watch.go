package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Settle is how long the settings file must be quiet before it is read
// again: editors write in several steps.
const Settle = 200 * time.Millisecond

// Watch sends the settings each time the file at path changes to
// something valid and new, so a running program applies a change made in
// its Settings window, by the command line or in an editor at once. A
// file with an error goes to bad, once per distinct error (the file's
// error at the start, which the caller read itself, is not told again);
// nothing is sent for it, and the settings in use stay. The first valid
// file after an error is sent even when it holds the settings in use, so
// the caller knows it is mended. The channel closes when ctx ends.
func Watch(ctx context.Context, path string, bad func(error)) (<-chan Config, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("watching settings: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching settings: %w", err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watching settings in %s: %w", dir, err)
	}
	out := make(chan Config)
	last, startErr := Load(path)
	go func() {
		defer close(out)
		defer w.Close()
		var settle <-chan time.Time
		// lastErr is the error last seen, the file's at start included
		// (the caller read it too): it is not told again, and the first
		// valid file after it is sent even when it equals the defaults
		// in use, so the caller knows the file is mended.
		var lastErr string
		if startErr != nil {
			lastErr = startErr.Error()
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == filepath.Clean(path) {
					settle = time.After(Settle)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				settle = time.After(Settle) // an overflow may hide a change: read again
			case <-settle:
				settle = nil
				cfg, err := Load(path)
				if err != nil {
					if err.Error() != lastErr && bad != nil {
						bad(err)
					}
					lastErr = err.Error()
					continue
				}
				mended := lastErr != ""
				lastErr = ""
				if reflect.DeepEqual(cfg, last) && !mended {
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
	return out, nil
}
