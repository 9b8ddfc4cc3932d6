//go:build windows

package autostart

import (
	"errors"
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

// TestWindowsAutostartMachine: with the machine's Run value (a per-machine
// install with AUTOSTART=1) GPU Canary starts at login for the Settings
// window too; turning it on adds no second start in the user's Run key,
// and turning it off says only an administrator can, leaving the
// machine's value alone. Under wine the test may write HKLM (its user is
// an administrator); it puts back what it found.
func TestWindowsAutostartMachine(t *testing.T) {
	machine, _, err := registry.CreateKey(registry.LOCAL_MACHINE, runKey, registry.SET_VALUE|registry.QUERY_VALUE)
	if err != nil {
		t.Skipf("HKLM's Run key is not writable here (an administrator's test): %v", err)
	}
	t.Cleanup(func() { machine.Close() }) // the last clean-up: the others use it
	if _, _, err := machine.GetStringValue(runValue); err == nil {
		t.Skip("the machine's Run key already starts GPU Canary")
	}
	user, err := runCommand()
	if err == nil {
		t.Cleanup(func() {
			k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
			if err == nil {
				k.SetStringValue(runValue, user)
				k.Close()
			}
		})
	}
	if err := Set(false); err != nil {
		t.Fatal(err)
	}
	const line = `"C:\Program Files\GPU Canary\gpucanaryw.exe"`
	if err := machine.SetStringValue(runValue, line); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { machine.DeleteValue(runValue) })

	if !Enabled() {
		t.Error("Enabled with the machine's Run value: false")
	}
	if err := Set(true); err != nil {
		t.Errorf("Set(true) with the machine's Run value: %v", err)
	}
	if v, err := runCommand(); err == nil {
		t.Errorf("Set(true) with the machine's Run value wrote the user's too: %s", v)
	}
	if err := Set(false); !errors.Is(err, errMachine) {
		t.Errorf("Set(false) with the machine's Run value: %v, want errMachine", err)
	}
	if v, _, err := machine.GetStringValue(runValue); err != nil || v != line {
		t.Errorf("the machine's Run value is now %q, %v", v, err)
	}
	if moved, err := Repoint(); moved || err != nil {
		t.Errorf("Repoint with only the machine's Run value: %v, %v; want it left to the installer", moved, err)
	}
	if v, _, err := machine.GetStringValue(runValue); err != nil || v != line {
		t.Errorf("Repoint changed the machine's Run value: %q, %v", v, err)
	}
}
