package procs

import (
	"path/filepath"
	"testing"
)

// TestProgramAndInside: a process's program is its argv[0] resolved
// against its working directory; it runs from an environment when that,
// or its executable file, lies inside it, or it was attributed to it.
func TestProgramAndInside(t *testing.T) {
	root := t.TempDir() // absolute on every platform (C:\… on Windows)
	at := func(rel string) string {
		if rel == "" {
			return ""
		}
		return filepath.Join(root, filepath.FromSlash(rel))
	}
	env := at("proj/.venv")
	for _, tc := range []struct {
		name    string
		p       Proc
		program string
		inside  bool
	}{
		{"absolute", Proc{Cmdline: []string{at("proj/.venv/bin/python"), "x.py"}}, at("proj/.venv/bin/python"), true},
		{"relative to the working directory", Proc{Cmdline: []string{".venv/bin/python"}, Cwd: at("proj")}, at("proj/.venv/bin/python"), true},
		{"./python from bin/", Proc{Cmdline: []string{"./python"}, Cwd: at("proj/.venv/bin")}, at("proj/.venv/bin/python"), true},
		{"climbing out", Proc{Cmdline: []string{"../../other/bin/python"}, Cwd: at("proj/.venv/bin")}, at("proj/other/bin/python"), false},
		{"a bare name: unknown", Proc{Cmdline: []string{"python"}, Cwd: at("proj/.venv/bin")}, "", false},
		{"relative with no working directory: unknown", Proc{Cmdline: []string{".venv/bin/python"}}, "", false},
		{"the executable inside (a copied interpreter)", Proc{Cmdline: []string{"python"}, Exe: at("proj/.venv/bin/python3.11")}, "", true},
		{"attributed", Proc{EnvPath: env}, "", true},
		{"a neighbour whose name starts the same", Proc{Cmdline: []string{at("proj/.venv2/bin/python")}, Exe: at("proj/.venv2/bin/python")}, at("proj/.venv2/bin/python"), false},
		{"no command line", Proc{}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Program(); got != tc.program {
				t.Errorf("Program() = %q, want %q", got, tc.program)
			}
			if got := tc.p.Inside(env); got != tc.inside {
				t.Errorf("Inside = %v, want %v", got, tc.inside)
			}
		})
	}
}
