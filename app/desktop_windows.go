//go:build windows

package app

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/windows/registry"
)

func openFolder(path string) error { return exec.Command("explorer", path).Start() }

// terminate ends a process (Windows has no SIGTERM).
func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func setTooltip(string) {}

const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

func autostartEnabled() bool {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	defer k.Close()
	_, _, err = k.GetStringValue("GPU Canary")
	return err == nil
}

// setAutostart adds or removes GPU Canary in the user's Run key.
func setAutostart(on bool) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("opening the Run key: %w", err)
	}
	defer k.Close()
	if !on {
		_ = k.DeleteValue("GPU Canary")
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return k.SetStringValue("GPU Canary", `"`+exe+`"`)
}

func trayHostMissing() bool { return false }
