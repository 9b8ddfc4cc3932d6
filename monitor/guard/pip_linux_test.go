package guard_test

import (
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// index serves torch 2.5.1 and 2.6.0 and torchvision 0.20.1 for cpu and
// cu121 as BASE/TAG/, torch 2.5.1 as PyPI's CUDA wheel has it (no local
// tag) under BASE/pypi/, and under BASE/cpu a custom node that asks for
// torch==2.6.0.
func index(t *testing.T) string {
	t.Helper()
	idx := wheeltest.NewIndex(t.TempDir())
	for _, tag := range []string{"cpu", "cu121"} {
		for _, s := range []wheeltest.Spec{wheeltest.Torch("2.5.1", tag), wheeltest.Torch("2.6.0", tag), wheeltest.Companion("torchvision", "0.20.1", tag)} {
			if err := idx.Add(tag, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	pypi := wheeltest.Torch("2.5.1", "cu124")
	pypi.Version = "2.5.1"
	if err := idx.Add("pypi", pypi); err != nil {
		t.Fatal(err)
	}
	if err := idx.Add("cpu", wheeltest.Spec{Name: "customnode", Version: "1.0", Requires: []string{"torch==2.6.0"}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	return srv.URL
}

// userPip runs pip as a user does: it reads the venv's own config (the
// wheeltest helpers turn config off), and nothing of this machine's user.
func userPip(py, venv string, args ...string) (string, error) {
	cmd := exec.Command(py, append([]string{"-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "--disable-pip-version-check", "--no-input"}, args...)...)
	home := filepath.Join(filepath.Dir(venv), "home")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIP_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "PIP_NO_CACHE_DIR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func torchIn(t *testing.T, venv string) string {
	t.Helper()
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if p := env.Torch(); p != nil {
		return p.Version
	}
	return ""
}

// TestGuardedVenvRefusesAnotherTorch is the issue's own test: real pip,
// a venv's own pip config. After guard, a CPU torch of the same release
// and a package that asks for another torch both fail and torch stays;
// after unguard the venv is what it was byte for byte, and the same
// install goes through.
func TestGuardedVenvRefusesAnotherTorch(t *testing.T) {
	py := wheeltest.Python(t)
	base := index(t)
	cases := []struct {
		name, from, install, existing string
		want                          string // torch after the install that goes through
		args                          []string
	}{
		{name: "local tag", from: "cu121", install: "torch==2.5.1+cu121", want: "2.5.1+cpu",
			args: []string{"torch==2.5.1+cpu"}},
		// PyPI's CUDA wheel has no local tag: ==2.5.1 would admit +cpu.
		{name: "no local tag", from: "pypi", install: "torch==2.5.1", want: "2.5.1+cpu",
			args: []string{"torch==2.5.1+cpu"}},
		{name: "custom node", from: "cu121", install: "torch==2.5.1+cu121", want: "2.6.0+cpu",
			args: []string{"customnode"}},
		// A pip.conf of the user's, which already names a constraints
		// file in [global]: ours joins it, theirs stays in force.
		{name: "user config", from: "cu121", install: "torch==2.5.1+cu121", want: "2.5.1+cpu",
			existing: "[global]\ntimeout = 60\nconstraint = %s\n", args: []string{"torch==2.5.1+cpu"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A space in the path: pip splits the config's constraint value on it.
			venv := filepath.Join(t.TempDir(), "my env", ".venv")
			if err := os.MkdirAll(filepath.Dir(venv), 0o755); err != nil {
				t.Fatal(err)
			}
			wheeltest.NewVenv(t, py, venv)
			wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/"+c.from, c.install)
			theirs := filepath.Join(filepath.Dir(venv), "theirs.txt")
			if c.existing != "" {
				// Their constraint allows any torch, but holds numpy back.
				if err := os.WriteFile(theirs, []byte("numpy<1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				conf := strings.ReplaceAll(c.existing, "%s", "file://"+strings.ReplaceAll(theirs, " ", "%20"))
				if err := os.WriteFile(filepath.Join(venv, "pip.conf"), []byte(conf), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, venv)
			installed := torchIn(t, venv)

			k := guard.Keeper{StateDir: t.TempDir()}
			res, err := k.Guard(venv)
			if err != nil {
				t.Fatal(err)
			}
			if st := k.Read(venv); !st.Guarded || len(st.Changed) > 0 {
				t.Fatalf("after guard: %+v", st)
			}
			conf, _ := os.ReadFile(filepath.Join(venv, "pip.conf"))
			for _, want := range []string{"GPU Canary", "gpucanary unguard"} {
				if !strings.Contains(string(conf), want) {
					t.Errorf("pip.conf lacks %q:\n%s", want, conf)
				}
			}
			out, err := userPip(py, venv, append([]string{"install", "--index-url", base + "/cpu"}, c.args...)...)
			if err == nil {
				t.Fatalf("pip install %s went through a guard (%v):\n%s", c.args, res, out)
			}
			if !strings.Contains(out, "ResolutionImpossible") && !strings.Contains(out, "conflict") {
				t.Errorf("pip's refusal does not say why:\n%s", out)
			}
			if got := torchIn(t, venv); got != installed {
				t.Fatalf("torch %s after the refused install; want %s", got, installed)
			}
			if c.existing != "" {
				out, err := userPip(py, venv, "config", "list")
				if err != nil || !strings.Contains(out, "theirs.txt") || !strings.Contains(out, guard.ConstraintsName) {
					t.Errorf("pip config list does not show both constraints (%v):\n%s", err, out)
				}
			}

			if _, err := k.Unguard(venv, false); err != nil {
				t.Fatal(err)
			}
			if d := diffTrees(before, tree(t, venv)); len(d) > 0 {
				t.Fatalf("unguard did not restore the venv byte for byte:\n%s", strings.Join(d, "\n"))
			}
			if st := k.Read(venv); st.Guarded || len(st.Changed) > 0 {
				t.Errorf("after unguard: %+v", st)
			}
			if out, err := userPip(py, venv, append([]string{"install", "--index-url", base + "/cpu"}, c.args...)...); err != nil {
				t.Fatalf("after unguard: %v\n%s", err, out)
			}
			if got := torchIn(t, venv); got != c.want {
				t.Errorf("torch %s after unguard and install; want %s", got, c.want)
			}
		})
	}
}

// TestUnguardRefusesAFileChangedByHand: a guard whose pip.conf the user
// edited is not restored over their edit unless forced, and Read says it
// was changed.
func TestUnguardRefusesAFileChangedByHand(t *testing.T) {
	py := wheeltest.Python(t)
	base := index(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/cu121", "torch==2.5.1+cu121")
	k := guard.Keeper{StateDir: t.TempDir()}
	if _, err := k.Guard(venv); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(venv, "pip.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[list]\nformat = columns\n")
	f.Close()
	if st := k.Read(venv); st.Guarded || len(st.Changed) != 1 || !strings.Contains(st.Changed[0], "pip.conf edited") {
		t.Errorf("after the edit: %+v", st)
	}
	_, err = k.Unguard(venv, false)
	var ce *guard.ChangedError
	if !errors.As(err, &ce) {
		t.Fatalf("unguard over an edit: %v", err)
	}
	if _, err := k.Unguard(venv, true); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pip.conf", guard.ConstraintsName} {
		if _, err := os.Stat(filepath.Join(venv, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after a forced unguard: %v", n, err)
		}
	}
}
