//go:build !windows

package shell

import "testing"

// TestNativeIsPOSIX: off Windows, commands are written for a POSIX shell,
// as they always were.
func TestNativeIsPOSIX(t *testing.T) {
	argv := []string{"/home/ana/my env/bin/python", "-m", "pip", "install", "torch==2.5.1+cu124"}
	if got, want := Join(argv), "'/home/ana/my env/bin/python' -m pip install torch==2.5.1+cu124"; got != want {
		t.Errorf("Join = %s, want %s", got, want)
	}
	if got := Quote("$HOME"); got != "'$HOME'" {
		t.Errorf("Quote($HOME) = %s", got)
	}
}
