package tray

import (
	"strings"
	"testing"
	"unicode/utf16"
)

// TestCutUTF16: a tooltip over the Windows limit is cut to it, "…"
// included, without splitting a character that takes two units.
func TestCutUTF16(t *testing.T) {
	long := "GPU Canary: 1 GPU · 4 jobs on GPU\n" + strings.Repeat("train.py · 1h15m · GPU 0 87 %\n", 5)
	got := cutUTF16(long, 127)
	if n := len(utf16.Encode([]rune(got))); n != 127 || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("cut to %d units: %q", n, got)
	}
	if got := cutUTF16("short", 127); got != "short" {
		t.Errorf("a short tooltip changed: %q", got)
	}
	emoji := strings.Repeat("🔥", 10) // two units each
	if got := cutUTF16(emoji, 6); got != "🔥🔥…" {
		t.Errorf("a pair split: %q", got)
	}
}
