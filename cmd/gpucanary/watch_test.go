package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestWatchPrintsJSONLinesAndStopsOnCancel runs `watch --json` as a user
// would: one JSON object a line as things happen, a clean stop on Ctrl-C.
func TestWatchPrintsJSONLinesAndStopsOnCancel(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--gpu-sim", simFile(t, simA100), "watch", "--json", env}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("not a JSON line: %q", sc.Text())
				continue
			}
			lines <- ev
		}
		close(lines)
	}()
	waitKind := func(kind string) map[string]any {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case ev, ok := <-lines:
				if !ok {
					t.Fatalf("watch ended before %s", kind)
				}
				if ev["kind"] == kind {
					return ev
				}
			case <-timeout:
				t.Fatalf("no %s line", kind)
			}
		}
	}
	added := waitKind("ENV_ADDED")
	if added["env"] != env || added["time"] == nil {
		t.Errorf("ENV_ADDED = %v", added)
	}
	// The environment's torch becomes a CPU build.
	time.Sleep(200 * time.Millisecond)
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	ev := waitKind("CUDA_WHEEL_REPLACED")
	before, _ := ev["before"].(map[string]any)
	after, _ := ev["after"].(map[string]any)
	if before["cuda"] != "12.1" || after["build"] != "cpu" || !strings.Contains(ev["message"].(string), "→") || ev["fix"] == nil {
		t.Errorf("event = %v", ev)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after Ctrl-C", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop on cancel")
	}
}
