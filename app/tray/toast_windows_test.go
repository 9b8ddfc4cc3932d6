//go:build windows

package tray

import (
	"bytes"
	"github.com/gpucanary/gpucanary/app/present"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows/registry"

	"github.com/gpucanary/gpucanary/assets"
)

// TestWindowsToastRegistration: the first notification registers GPU
// Canary's AppUserModelID for this user, per toastRegistration, with the
// icon written where IconUri points; a stale value (the program moved) is
// rewritten. Whether the toast itself shows is Windows' part (wine has no
// toast platform; docs/testing.md, "Testing the Windows build"): notify must return either way.
// scripts/test-windows.sh reads the values back with wine's reg.exe too.
func TestWindowsToastRegistration(t *testing.T) {
	t.Setenv("LOCALAPPDATA", t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A registration left by a copy of GPU Canary somewhere else.
	stale := toastRegistration(`C:\old place\gpucanaryw.exe`, `C:\old place\icon.png`)
	if err := writeRegistry(stale); err != nil {
		t.Fatal(err)
	}
	err = showNote(present.Note{Title: "GPU Canary test", Body: "registration", Env: `C:\env`})
	t.Logf("notify: %v", err)
	if err := toastSetup(); err != nil {
		t.Fatalf("registering: %v", err)
	}
	icon := filepath.Join(os.Getenv("LOCALAPPDATA"), "gpucanary", "icon.png")
	if b, err := os.ReadFile(icon); err != nil || !bytes.Equal(b, assets.AppIcon) {
		t.Errorf("the icon at %s: %v", icon, err)
	}
	for _, v := range toastRegistration(exe, icon) {
		k, err := registry.OpenKey(registry.CURRENT_USER, v.Key, registry.QUERY_VALUE)
		if err != nil {
			t.Errorf("HKCU\\%s: %v", v.Key, err)
			continue
		}
		got, _, err := k.GetStringValue(v.Name)
		k.Close()
		if err != nil || got != v.Value {
			t.Errorf("HKCU\\%s %q = %q (%v), want %q", v.Key, v.Name, got, err, v.Value)
		}
	}
}
