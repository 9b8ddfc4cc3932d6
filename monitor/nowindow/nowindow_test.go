package nowindow

import (
	"os/exec"
	"testing"
)

// TestHideKeepsTheCommand: Hide returns the command it was given, ready
// to run, on every platform.
func TestHideKeepsTheCommand(t *testing.T) {
	cmd := exec.Command("true")
	if Hide(cmd) != cmd {
		t.Error("Hide returned another command")
	}
	if c := Command("prog", "a", "b"); len(c.Args) != 3 || c.Args[2] != "b" {
		t.Errorf("Command's Args = %q", c.Args)
	}
}
