//go:build nogui

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestEmbeddingStartsTheTray: Windows starts the program a notification's
// activator names with -Embedding when a notification is clicked while
// GPU Canary is not running; that is a start of the tray (here the
// GUI-free build's answer for it), not an unknown flag.
// scripts/test-windows.sh runs it under wine.
func TestEmbeddingStartsTheTray(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-Embedding"}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != exitUsage || !strings.Contains(errb.String(), "this build has no tray") {
		t.Errorf("run(-Embedding) = %d, %q; want the tray's start", code, errb.String())
	}
}
