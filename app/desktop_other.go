//go:build !linux && !windows

package app

import (
	"os"
	"os/exec"
)

func openFolder(path string) error { return exec.Command("open", path).Start() }

func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(os.Interrupt)
}
