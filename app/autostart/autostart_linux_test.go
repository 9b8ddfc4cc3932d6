//go:build linux

package autostart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDesktopQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/usr/bin/gpucanary", `"/usr/bin/gpucanary"`},
		{"/opt/GPU Canary/gpucanary", `"/opt/GPU Canary/gpucanary"`},
		{`/home/u/$weird"dir/100%/a\b`, `"/home/u/\\$weird\\"dir/100%%/a\\\\b"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := desktopQuote(tc.in); got != tc.want {
				t.Errorf("desktopQuote(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestAutostart writes and removes the XDG autostart entry under
// $XDG_CONFIG_HOME, as a desktop session reads it at login.
func TestAutostart(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	entry := filepath.Join(cfg, "autostart", appID+".desktop")
	if Enabled() {
		t.Fatal("enabled before it was set")
	}
	if err := Set(true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	for _, want := range []string{"[Desktop Entry]\n", "Type=Application\n", "Exec=" + desktopQuote(exe) + "\n", "Icon=" + appID + "\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("entry lacks %q:\n%s", want, b)
		}
	}
	if !Enabled() {
		t.Error("not enabled after it was set")
	}
	for range 2 { // removing twice is not an error
		if err := Set(false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) || Enabled() {
		t.Errorf("entry still there: %v", err)
	}
}
