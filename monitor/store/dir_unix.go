//go:build !windows

package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// stateDir follows the XDG base directory spec: $XDG_STATE_HOME, else
// ~/.local/state.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "gpucanary"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "gpucanary"), nil
}

// DirVariable is the environment variable that moves the state folder.
const DirVariable = "XDG_STATE_HOME"
