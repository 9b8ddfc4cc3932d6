package procs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallerFixtureProc reads testdata/proc, a proc tree of installers
// caught in the act (cmdline, environ, and cwd and exe as links).
func TestInstallerFixtureProc(t *testing.T) {
	src := NewSource(Options{ProcRoot: filepath.Join("testdata", "proc")})
	tests := []struct {
		env     string
		pid     int
		command string
	}{
		{"/home/ada/proj/.venv", 100, "uv pip install --python /home/ada/proj/.venv torch"},
		{"/home/ada/llm/.venv", 200, "python /home/ada/llm/.venv/bin/pip install torch"},
		{"/home/ada/chat/.venv", 210, "pip install -r requirements.txt"},
		{"/home/ada/web/.venv", 300, "uv sync"},
		{"/opt/conda/envs/ml", 510, "python3 -m pip install xformers"},
		{"/home/ada/sec/.venv", 600, "pip install --index-url https://ada:***@pypi.example.org/simple --prefix=/home/ada/sec/.venv torch"},
		{"/srv/app/env", 700, "uv run --no-sync serve.py"},
		{"/home/ada/proj/.ven", 0, ""},
		{"/home/ada/other/.venv", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			got := src.Installer(context.Background(), tt.env)
			if tt.pid == 0 {
				if got != nil {
					t.Fatalf("Installer = %+v, want none", got)
				}
				return
			}
			if got == nil || got.PID != tt.pid || got.Command != tt.command {
				t.Fatalf("Installer = %+v, want PID %d %q", got, tt.pid, tt.command)
			}
		})
	}
	if got := NewSource(Options{ProcRoot: filepath.Join(t.TempDir(), "absent")}).Installer(context.Background(), "/home/ada/proj/.venv"); got != nil {
		t.Errorf("Installer over a missing proc = %+v", got)
	}
}

// TestInstallerRealProcess catches a real process: the test binary run
// as ENV/bin/pip3, as a console script runs.
func TestInstallerRealProcess(t *testing.T) {
	env, _ := fixtureEnv(t)
	pip := filepath.Join(env, "bin", "pip3")
	if err := os.MkdirAll(filepath.Dir(pip), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], pip); err != nil {
		t.Fatal(err)
	}
	h := startHelperAs(t, pip, "sleep", nil)
	got := NewSource(Options{}).Installer(context.Background(), env)
	if got == nil || got.PID != h.cmd.Process.Pid || !strings.HasPrefix(got.Command, "pip3 -test.run=") {
		t.Fatalf("Installer = %+v, want PID %d running pip3", got, h.cmd.Process.Pid)
	}
	if got := NewSource(Options{}).Installer(context.Background(), filepath.Join(t.TempDir(), "other")); got != nil {
		t.Errorf("Installer for an environment nothing installs into = %+v", got)
	}
}
