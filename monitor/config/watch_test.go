package config

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWatch follows a real settings file: a valid change is sent once, a
// rewrite with the same content is not, a broken file is told once per
// error and sends nothing, and the channel closes with its context.
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpucanary", "config.toml")
	var mu sync.Mutex
	var bad []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := Watch(ctx, path, func(err error) { mu.Lock(); bad = append(bad, err.Error()); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	next := func() (Config, bool) {
		select {
		case c, ok := <-ch:
			return c, ok
		case <-time.After(5 * Settle):
			return Config{}, false
		}
	}
	c := Default()
	c.Roots = []string{"/data"}
	if err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	if got, ok := next(); !ok || !slices.Equal(got.Roots, c.Roots) {
		t.Fatalf("after a save: %+v, %v", got, ok)
	}
	if err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	if got, ok := next(); ok {
		t.Errorf("the same settings were sent again: %+v", got)
	}
	for i := 0; i < 2; i++ {
		if err := os.WriteFile(path, []byte("cpu_fallback_percent = -3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := next(); ok {
			t.Errorf("a broken file was sent: %+v", got)
		}
	}
	mu.Lock()
	if len(bad) != 1 || !strings.Contains(bad[0], "cpu_fallback_percent") {
		t.Errorf("errors told: %q, want one", bad)
	}
	mu.Unlock()
	cancel()
	for range ch {
	}
}

// TestWatchSendsTheMendedFile: a file broken when the watch starts and
// then mended is sent even when it holds the defaults (the settings in
// use), so a caller that showed the error knows it is gone.
func TestWatchSendsTheMendedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpucanary", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("refresh = \"soon\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := Watch(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(path, Default()); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ch:
		if got.Refresh != Default().Refresh {
			t.Errorf("sent %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the mended file was not sent")
	}
}
