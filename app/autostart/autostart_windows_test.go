//go:build windows

package autostart

import (
	"os"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// TestWindowsAutostartRepoint: Set writes the Run key with this program;
// a Run value naming another place (the program moved) is rewritten by
// Repoint, one naming this program is left, and a disabled start at
// login stays disabled. scripts/test-windows.sh reads the value back
// with wine's reg.exe too.
func TestWindowsAutostartRepoint(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("AUTOSTART_KEEP") != "1" { // test-windows.sh reads it back
		t.Cleanup(func() { Set(false) })
	}
	if err := Set(false); err != nil {
		t.Fatal(err)
	}
	if moved, err := Repoint(); moved || err != nil || Enabled() {
		t.Fatalf("Repoint while disabled: %v, %v; enabled %v", moved, err, Enabled())
	}
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	k.SetStringValue(runValue, `"C:\old place\gpucanaryw.exe"`)
	k.Close()
	if moved, err := Repoint(); !moved || err != nil {
		t.Fatalf("Repoint after a move: %v, %v; want rewritten", moved, err)
	}
	if got, _ := runCommand(); got != `"`+exe+`"` {
		t.Errorf("the Run value is %s, want %q", got, `"`+exe+`"`)
	}
	if moved, err := Repoint(); moved || err != nil {
		t.Errorf("Repoint when it already points here: %v, %v", moved, err)
	}
}
