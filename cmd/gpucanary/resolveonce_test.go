package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// TestCheckResolvesEachPathOnce: `check PATH...` resolves each path given
// once (issue 33). A uv project's rule reads UV_PROJECT_ENVIRONMENT once
// per resolution, through the getenv the command is given, so counting
// those reads counts the resolutions of the two uv projects given: one
// with its .venv, one whose environment is not made yet. Before, the
// search resolved each path a second time.
func TestCheckResolvesEachPathOnce(t *testing.T) {
	fixEnvSetup(t)
	withVenv, without := uvProjectDir(t, true), uvProjectDir(t, false)
	var mu sync.Mutex
	reads := 0
	g := &globals{cfg: config.Default(), log: slog.New(slog.DiscardHandler), gpuSim: simFile(t, simA100),
		getenv: func(name string) string {
			if name == "UV_PROJECT_ENVIRONMENT" {
				mu.Lock()
				reads++
				mu.Unlock()
			}
			return os.Getenv(name)
		}}
	var out, errb bytes.Buffer
	code := cmdCheck(context.Background(), g, []string{withVenv, without}, textOutput(g.getenv), stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != exitFound || !strings.Contains(out.String(), "(uv project)") || !strings.Contains(out.String(), "ENV_NOT_CREATED") {
		t.Fatalf("check exit %d:\n%s%s", code, out.String(), errb.String())
	}
	if reads != 2 {
		t.Errorf("check of 2 uv projects resolved them %d times in all (reads of UV_PROJECT_ENVIRONMENT), want once each", reads)
	}
}

// lockedBuffer is a bytes.Buffer a command writes from one goroutine
// while the test reads it from another (watch here, ps --watch).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchResolvesEachPathOnce: `watch PATH...` too resolves each path
// once: the engine is handed the command's resolutions (engine.Options
// .Given) rather than resolving the paths again in its first search.
func TestWatchResolvesEachPathOnce(t *testing.T) {
	fixEnvSetup(t)
	withVenv, without := uvProjectDir(t, true), uvProjectDir(t, false)
	var mu sync.Mutex
	reads := 0
	g := &globals{cfg: config.Default(), log: slog.New(slog.DiscardHandler), gpuSim: simFile(t, simA100),
		getenv: func(name string) string {
			if name == "UV_PROJECT_ENVIRONMENT" {
				mu.Lock()
				reads++
				mu.Unlock()
			}
			return os.Getenv(name)
		}}
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- cmdWatch(ctx, g, []string{withVenv, without}, false, true, stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Watching 2 environments") {
		if time.Now().After(deadline) {
			t.Fatalf("watch did not say what it watches in 30s:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if reads != 2 {
		t.Errorf("watch of 2 uv projects resolved them %d times in all (reads of UV_PROJECT_ENVIRONMENT), want once each:\n%s", reads, out.String())
	}
}
