//go:build windows

package store

import (
	"errors"
	"os"
	"path/filepath"
)

// stateDir is %LOCALAPPDATA%\gpucanary.
func stateDir() (string, error) {
	d := os.Getenv("LOCALAPPDATA")
	if d == "" {
		return "", errors.New("finding the state directory: LOCALAPPDATA is not set")
	}
	return filepath.Join(d, "gpucanary"), nil
}

// DirVariable is the environment variable that moves the state folder.
const DirVariable = "LOCALAPPDATA"
