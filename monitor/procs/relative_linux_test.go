package procs

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// relativeEnv is an environment whose bin/python is a symlink to the
// base "interpreter" (sleep stands in for it, as a venv's python points
// at the system's), and bin/python-copy a copy of it (as conda's or
// `venv --copies` is): started relatively, argv names neither absolutely.
func relativeEnv(t *testing.T) (parent, env string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	parent = t.TempDir()
	env = filepath.Join(parent, "env")
	bin := filepath.Join(env, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(sleep)
	if err := os.Symlink(real, filepath.Join(bin, "python")); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(real)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(bin, "python-copy"), os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return parent, env
}

// RelativeLaunches starts the environment's programs as people do, with
// no VIRTUAL_ENV to give them away, and returns their PIDs by how they
// were started.
func relativeLaunches(t *testing.T, parent, env string) map[string]int {
	t.Helper()
	clean := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "VIRTUAL_ENV=") || strings.HasPrefix(kv, "CONDA_PREFIX=")
	})
	start := func(dir, path string, argv0 string) int {
		cmd := exec.Command(path, "60")
		cmd.Dir, cmd.Env = dir, clean
		cmd.Args[0] = argv0
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	return map[string]int{
		// cd /some/dir && env/bin/python …
		"env/bin/python from its parent": start(parent, "env/bin/python", "env/bin/python"),
		// cd env/bin && ./python …
		"./python from bin/": start(filepath.Join(env, "bin"), "./python", "./python"),
		// a copied interpreter found on PATH: argv[0] is a bare name
		"python-copy on PATH": start(t.TempDir(), filepath.Join(env, "bin", "python-copy"), "python-copy"),
	}
}

// TestRelativeLaunchesAreAttributed: a process started by a relative
// path is attributed to its environment by its program resolved against
// its working directory, or by its executable file, not by argv's text.
func TestRelativeLaunchesAreAttributed(t *testing.T) {
	parent, env := relativeEnv(t)
	pids := relativeLaunches(t, parent, env)
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for how, pid := range pids {
		i := slices.IndexFunc(ps, func(p Proc) bool { return p.PID == pid })
		if i < 0 {
			t.Fatalf("%s: PID %d not scanned", how, pid)
		}
		p := ps[i]
		if p.EnvPath != env || p.EnvVia != viaInterpreter || !p.Inside(env) {
			t.Errorf("%s: env %q via %q, cwd %q, exe %q, program %q", how, p.EnvPath, p.EnvVia, p.Cwd, p.Exe, p.Program())
		}
	}
}
