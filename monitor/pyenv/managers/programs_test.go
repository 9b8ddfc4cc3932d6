package managers_test

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// TestInstallerProgram: which command lines the culprit search counts as
// installers, and whose, as /proc/PID/cmdline shows them.
func TestInstallerProgram(t *testing.T) {
	tests := []struct {
		argv []string
		want string // "" means not an installer
	}{
		{[]string{"/home/me/.local/bin/uv", "pip", "install", "torch"}, "uv"},
		{[]string{"uv", "run", "train.py"}, "uv"},
		{[]string{"/usr/local/bin/uvx", "ruff"}, "uv"},
		{[]string{"/home/me/proj/.venv/bin/pip", "install", "torch"}, "pip"},
		{[]string{"pip3", "install", "-U", "torch"}, "pip"},
		{[]string{"pip3.12", "install", "torch"}, "pip"},
		{[]string{"/usr/bin/python3", "-m", "pip", "install", "torch"}, "pip"},
		{[]string{"python3.11", "-I", "-m", "pip", "install", "torch"}, "pip"},
		{[]string{"python", "-m", "uv", "pip", "install", "torch"}, "uv"},
		{[]string{"python", "-m", "conda", "install", "pytorch"}, "conda"},
		// a #! script shows as its interpreter followed by the script
		{[]string{"/home/me/proj/.venv/bin/python3", "/home/me/proj/.venv/bin/pip", "install", "torch"}, "pip"},
		{[]string{"/opt/conda/bin/python", "/opt/conda/bin/conda", "install", "pytorch"}, "conda"},
		{[]string{"/opt/conda/bin/conda", "install", "pytorch"}, "conda"},
		{[]string{"/home/me/micromamba/bin/micromamba", "install", "pytorch"}, "conda"},
		{[]string{"mamba", "install", "pytorch"}, "conda"},
		// Windows command lines
		{[]string{`C:\Users\me\proj\.venv\Scripts\pip.exe`, "install", "torch"}, "pip"},
		{[]string{`C:\Users\me\.local\bin\UV.EXE`, "pip", "install", "torch"}, "uv"},
		{[]string{`C:\Python311\python.exe`, "-m", "pip", "install", "torch"}, "pip"},
		// not installers
		{[]string{"/home/me/proj/.venv/bin/python", "train.py"}, ""},
		{[]string{"python", "-m", "venv", ".venv"}, ""},
		{[]string{"python", "-m"}, ""},
		{[]string{"python"}, ""},
		{[]string{"/usr/bin/bash", "-c", "pip install torch"}, ""},
		{[]string{"git", "pull"}, ""},
		{[]string{"condaenv"}, ""},
		{[]string{""}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			got, ok := managers.InstallerProgram(tt.argv)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("InstallerProgram = %q, %v; want %q, %v", got, ok, tt.want, tt.want != "")
			}
		})
	}
}

// TestInstallerProgramCoversTable: every program and module in the table
// is recognised as its manager's, so a new entry needs no edit here.
func TestInstallerProgramCoversTable(t *testing.T) {
	for _, m := range managers.Managers() {
		if len(m.Installed) == 0 {
			continue // not an installer: its environments are filled by one that is
		}
		t.Run(m.Name, func(t *testing.T) {
			if len(m.Programs) == 0 {
				t.Errorf("%s lists no installer programs", m.Name)
			}
			for _, p := range m.Programs {
				name := strings.ReplaceAll(p, "*", "3")
				if got, ok := managers.InstallerProgram([]string{"/usr/bin/" + name, "install"}); !ok || got != m.Name {
					t.Errorf("program %s: %q, %v; want %q", name, got, ok, m.Name)
				}
			}
			for _, mod := range m.Modules {
				if got, ok := managers.InstallerProgram([]string{"python3", "-m", mod, "install"}); !ok || got != m.Name {
					t.Errorf("python -m %s: %q, %v; want %q", mod, got, ok, m.Name)
				}
			}
		})
	}
}
