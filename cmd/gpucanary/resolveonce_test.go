package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

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
	code := cmdCheck(context.Background(), g, []string{withVenv, without}, checkText, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != exitFound || !strings.Contains(out.String(), "(uv project)") || !strings.Contains(out.String(), "ENV_NOT_CREATED") {
		t.Fatalf("check exit %d:\n%s%s", code, out.String(), errb.String())
	}
	if reads != 2 {
		t.Errorf("check of 2 uv projects resolved them %d times in all (reads of UV_PROJECT_ENVIRONMENT), want once each", reads)
	}
}
