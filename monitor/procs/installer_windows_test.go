package procs

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetScoreWindowsPaths: Windows compares paths without regard to
// case or to / and \, and keeps the current folder with a trailing \.
func TestTargetScoreWindowsPaths(t *testing.T) {
	const env = `C:\Users\Ada\proj\.venv`
	tests := []struct {
		name string
		c    candidate
		want int
	}{
		{"env in another case, with slashes", candidate{argv: []string{"uv", "pip", "install", "--python", "c:/users/ada/PROJ/.venv", "torch"}}, 3},
		{"--prefix= in another case", candidate{argv: []string{"pip", "install", `--prefix=C:\USERS\ada\proj\.venv`}}, 3},
		{"env with a trailing separator", candidate{argv: []string{"pip", "install", "--target", env + `\`}}, 3},
		{"its executable inside env", candidate{argv: []string{"python", "-m", "pip"}, exe: `c:\users\ada\proj\.venv\Scripts\python.exe`}, 3},
		{"VIRTUAL_ENV in another case", candidate{argv: []string{"pip.exe", "install", "torch"}, envVars: []string{`c:\users\ada\proj\.venv`}}, 2},
		{"uv.exe in the project folder", candidate{argv: []string{`C:\tools\uv.exe`, "sync"}, cwd: `c:\users\ada\proj`}, 1},
		{"a sibling whose name starts alike", candidate{argv: []string{"pip", "install", "--target", env + "2"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := targetScore(tt.c, env); got != tt.want {
				t.Errorf("targetScore(%+v) = %d, want %d", tt.c, got, tt.want)
			}
		})
	}
}

// TestInstallerRealProcesses catches real processes: the test binary
// copied as pip.exe and uv.exe, as the installers run, each aimed at its
// own environment in one of the ways an installer is.
func TestInstallerRealProcesses(t *testing.T) {
	bin := t.TempDir()
	pip, uv := filepath.Join(bin, "pip.exe"), filepath.Join(bin, "uv.exe")
	installAs(t, pip)
	installAs(t, uv)
	byArg, _ := fixtureEnv(t)
	byVar, _ := fixtureEnv(t)
	byCwd, _ := fixtureEnv(t)
	byExe, _ := fixtureEnv(t)
	python, _ := interpreterOf(byExe)
	installAs(t, python)

	uvSync := exec.Command(uv, "sync")
	uvSync.Dir = filepath.Dir(byCwd)
	tests := []struct {
		name    string
		env     string
		cmd     *exec.Cmd
		vars    []string
		command string
	}{
		{"the environment on the command line, in another case", byArg,
			exec.Command(pip, "install", "--prefix="+strings.ToUpper(byArg), "torch"), nil, "pip install --prefix=" + strings.ToUpper(byArg) + " torch"},
		{"VIRTUAL_ENV", byVar, exec.Command(pip, "install", "torch"), []string{"VIRTUAL_ENV=" + byVar}, "pip install torch"},
		{"uv in the project folder", byCwd, uvSync, nil, "uv sync"},
		{"the environment's own interpreter", byExe, exec.Command(python, "-m", "pip", "install", "x"), nil, "python -m pip install x"},
	}
	pids := make([]int, len(tests))
	for i, tt := range tests {
		pids[i] = startHelperCmd(t, tt.cmd, "sleep", nil, tt.vars...).cmd.Process.Pid
	}
	src := NewSource(Options{})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := src.Installer(context.Background(), tt.env)
			if got == nil || got.PID != pids[i] || got.Command != tt.command {
				t.Fatalf("Installer = %+v, want PID %d %q", got, pids[i], tt.command)
			}
		})
	}
	if got := src.Installer(context.Background(), filepath.Join(t.TempDir(), "other")); got != nil {
		t.Errorf("Installer for an environment nothing installs into = %+v", got)
	}
}
