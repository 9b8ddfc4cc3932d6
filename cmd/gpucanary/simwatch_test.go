package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// writeScenario replaces the scenario file at path with data, its
// modification time later than the last (*written), so the simulated
// backend, which rereads a file that changed, sees every write.
func writeScenario(t *testing.T, path, data string, written *time.Time) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Error(err)
		return
	}
	*written = written.Add(time.Second)
	if written.Before(time.Now()) {
		*written = time.Now().Add(time.Second)
	}
	if err := os.Chtimes(tmp, *written, *written); err != nil {
		t.Error(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

// simWatch is `watch --json` running on a simulated GPU whose scenario a
// writer rewrites every 50ms from what the test sets.
type simWatch struct {
	lines   chan map[string]any
	seen    []string // "KIND CODE" of each finding line read
	cancel  context.CancelFunc
	writing chan struct{}
	code    chan int
}

// startSimWatch runs `watch --json` on a healthy CUDA venv, with the
// settings (config.toml's lines) and a scenario file that write rewrites
// every 50ms until stop; settings and state are the test's own.
func startSimWatch(t *testing.T, settings string, write func(t *testing.T, path string)) *simWatch {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	env := filepath.Join(dir, "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "gpu.json")
	write(t, scenario)
	ctx, cancel := context.WithCancel(context.Background())
	w := &simWatch{lines: make(chan map[string]any, 256), cancel: cancel, writing: make(chan struct{}), code: make(chan int, 1)}
	t.Cleanup(cancel)
	go func() {
		defer close(w.writing)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
				write(t, scenario)
			}
		}
	}()
	pr, pw := io.Pipe()
	go func() {
		w.code <- run(ctx, []string{"--config", cfg, "--gpu-sim", scenario, "watch", "--json", env}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("not a JSON line: %q", sc.Text())
				continue
			}
			w.lines <- ev
		}
		close(w.lines)
	}()
	return w
}

// wait returns the next line of kind about a finding with code, within a
// minute.
func (w *simWatch) wait(t *testing.T, kind, code string) map[string]any {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-w.lines:
			if !ok {
				t.Fatalf("watch ended before %s %s; saw %v", kind, code, w.seen)
			}
			f, _ := ev["finding"].(map[string]any)
			if f == nil {
				continue
			}
			w.seen = append(w.seen, fmt.Sprint(ev["kind"], " ", f["code"]))
			if ev["kind"] == kind && f["code"] == code {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s %s line within 60s; saw %v", kind, code, w.seen)
		}
	}
}

// stop interrupts watch, as Ctrl-C does, and stops the writer: watch
// must end with status 0.
func (w *simWatch) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	<-w.writing
	select {
	case c := <-w.code:
		if c != 0 {
			t.Errorf("exit %d after Ctrl-C", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop on cancel")
	}
}
