//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCheckFIFOPyvenvCfg: `gpucanary check ENV` where ENV/pyvenv.cfg is
// a FIFO says so, and that it was not read, instead of calling the
// folder no environment ("no pyvenv.cfg").
func TestCheckFIFOPyvenvCfg(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "venv")
	if err := writeSpec(env, pyenvtest.Spec{}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(env, "pyvenv.cfg")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "check", env)
	if code != 1 || !strings.Contains(out, "ENV_UNREADABLE") || !strings.Contains(out, cfg+" is a FIFO, not a regular file: GPU Canary did not read it") || strings.Contains(out, "no pyvenv.cfg") {
		t.Errorf("exit %d, stderr %q\n%s", code, stderr, out)
	}
}
