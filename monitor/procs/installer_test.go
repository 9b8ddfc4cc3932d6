package procs

import (
	"strings"
	"testing"
)

func TestIsInstaller(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want bool
	}{
		{"uv", []string{"/home/ada/.local/bin/uv", "pip", "install", "torch"}, true},
		{"uvx", []string{"uvx", "ruff"}, true},
		{"conda", []string{"/opt/conda/bin/conda", "install", "pytorch"}, true},
		{"mamba", []string{"mamba", "install", "pytorch"}, true},
		{"micromamba", []string{"micromamba", "install", "pytorch"}, true},
		{"pip", []string{"pip", "install", "torch"}, true},
		{"pip3.11", []string{"/usr/bin/pip3.11", "install", "torch"}, true},
		{"python -m pip", []string{"python3", "-m", "pip", "install", "torch"}, true},
		{"python -m uv", []string{"python", "-u", "-m", "uv", "sync"}, true},
		{"pip through the interpreter", []string{"/env/bin/python", "/env/bin/pip", "install", "x"}, true},
		{"a Windows uv", []string{`C:\Users\ada\.local\bin\uv.exe`, "sync"}, true},
		{"a training script", []string{"python", "train.py", "--pip"}, false},
		{"python -m with nothing after", []string{"python", "-m"}, false},
		{"python -m another module", []string{"python", "-m", "torch.distributed.run"}, false},
		{"not an installer", []string{"/usr/bin/vim", "requirements.txt"}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isInstaller(tt.argv); got != tt.want {
				t.Errorf("isInstaller(%q) = %v, want %v", tt.argv, got, tt.want)
			}
		})
	}
}

func TestTargetScore(t *testing.T) {
	const env = "/home/ada/proj/.venv"
	tests := []struct {
		name string
		c    candidate
		want int
	}{
		{"env as an argument", candidate{argv: []string{"uv", "pip", "install", "--python", env, "torch"}}, 3},
		{"a path inside env", candidate{argv: []string{env + "/bin/python", "-m", "pip", "install", "torch"}}, 3},
		{"--prefix=env", candidate{argv: []string{"pip", "install", "--prefix=" + env, "torch"}}, 3},
		{"its executable inside env", candidate{argv: []string{"python3", "-m", "pip"}, exe: env + "/bin/python3.12"}, 3},
		{"VIRTUAL_ENV", candidate{argv: []string{"pip", "install", "torch"}, envVars: []string{env}}, 2},
		{"uv in the project folder", candidate{argv: []string{"/usr/bin/uv", "sync"}, cwd: "/home/ada/proj"}, 1},
		{"pip in the project folder", candidate{argv: []string{"pip", "install", "."}, cwd: "/home/ada/proj"}, 0},
		{"uv elsewhere", candidate{argv: []string{"uv", "sync"}, cwd: "/home/ada"}, 0},
		{"a sibling whose name starts alike", candidate{argv: []string{"pip", "install", "--target", env + "2"}}, 0},
		{"another environment", candidate{argv: []string{"pip", "install", "torch"}, envVars: []string{"/home/ada/other/.venv"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := targetScore(tt.c, env); got != tt.want {
				t.Errorf("targetScore(%+v) = %d, want %d", tt.c, got, tt.want)
			}
		})
	}
}

// TestPickInstaller: the surest candidate wins whatever the order, and
// the command shown is redacted with the program as its base name.
func TestPickInstaller(t *testing.T) {
	const env = "/opt/conda/envs/ml"
	cands := []candidate{
		{pid: 10, argv: []string{"conda", "install", "pytorch"}, envVars: []string{env}},
		{pid: 20, argv: []string{"/opt/conda/bin/pip", "install", "--index-url", "https://ada:s3cret@pypi.example.org/simple", "--prefix=" + env, "x"}},
		{pid: 30, argv: []string{"uv", "sync"}},
	}
	got := pickInstaller(env, cands)
	if got == nil || got.PID != 20 {
		t.Fatalf("pickInstaller = %+v, want PID 20", got)
	}
	if want := "pip install --index-url https://ada:***@pypi.example.org/simple --prefix=" + env + " x"; got.Command != want {
		t.Errorf("command = %q, want %q", got.Command, want)
	}
	if strings.Contains(got.Command, "s3cret") {
		t.Error("the password was shown")
	}
	if got := pickInstaller("/elsewhere", cands); got != nil {
		t.Errorf("pickInstaller for an environment none installs into = %+v", got)
	}
}
