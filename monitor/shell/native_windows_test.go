//go:build windows

package shell

import "testing"

// TestNativeIsPowerShell: on Windows, commands are written for
// PowerShell, the shell Windows Terminal opens.
func TestNativeIsPowerShell(t *testing.T) {
	argv := []string{`C:\Users\me\my proj\.venv\Scripts\python.exe`, "-m", "pip", "install", "torch==2.5.1+cu124"}
	if got, want := Join(argv), `& "C:\Users\me\my proj\.venv\Scripts\python.exe" -m pip install torch==2.5.1+cu124`; got != want {
		t.Errorf("Join = %s, want %s", got, want)
	}
	if got := Quote(`C:\$x`); got != "\"C:\\`$x\"" {
		t.Errorf("Quote(C:\\$x) = %s", got)
	}
}
