package guard_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/owned"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// nobody is the second local user of these tests: the environment's
// owner, or the one who plants a record.
const nobody = 65534

// chownTree gives every entry under root to uid, as if that user had
// made the tree (links themselves, not what they point to).
func chownTree(t *testing.T, root string, uid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving files to another user needs root; these tests run as root in CI")
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// secret is a file of root's outside every environment, which a link in
// an environment points to; it returns its path and content.
func secret(t *testing.T, mode fs.FileMode) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "root-only.conf")
	content := "# root's file\n[global]\ntimeout = 5\n"
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p, content
}

// TestGuardRefusesLinks is issue 42's item 2: run as root on an
// environment another user owns, a guard file (or a folder on its way)
// that is a link is refused with a message naming it, nothing is written
// through it, and the environment is left as it was. Unguard over a
// link planted after the guard is refused the same way.
func TestGuardRefusesLinks(t *testing.T) {
	cases := []struct {
		name  string
		spec  pyenvtest.Spec
		plant func(t *testing.T, env, target string) // makes the link
	}{
		{"pip.conf links to root's file", pyenvtest.Spec{Torch: cudaTorch}, func(t *testing.T, env, target string) {
			must(t, os.Symlink(target, filepath.Join(env, "pip.conf")))
		}},
		{"constraints file links to root's 0600 file", pyenvtest.Spec{Torch: cudaTorch}, func(t *testing.T, env, target string) {
			must(t, os.Symlink(target, filepath.Join(env, guard.ConstraintsName)))
		}},
		{"pip.conf links inside the environment", pyenvtest.Spec{Torch: cudaTorch}, func(t *testing.T, env, _ string) {
			must(t, os.WriteFile(filepath.Join(env, "mine.conf"), []byte("[global]\n"), 0o644))
			must(t, os.Symlink("mine.conf", filepath.Join(env, "pip.conf")))
		}},
		{"conda-meta is a link to a folder outside", pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"},
			func(t *testing.T, env, target string) {
				meta := filepath.Join(env, "conda-meta")
				outside := filepath.Join(filepath.Dir(target), "meta")
				must(t, os.Rename(meta, outside))
				must(t, os.Symlink(outside, meta))
				must(t, os.Symlink(target, filepath.Join(outside, "pinned")))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target, content := secret(t, 0o600)
			env := write(t, filepath.Join(t.TempDir(), "env"), c.spec)
			c.plant(t, env, target)
			chownTree(t, env, nobody)
			before := tree(t, env)
			k := guard.Keeper{StateDir: t.TempDir()}
			_, err := k.Guard(env)
			var u *guard.UnsafeFileError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), "link") {
				t.Fatalf("Guard = %v; want a refusal naming the link", err)
			}
			if b, _ := os.ReadFile(target); string(b) != content {
				t.Errorf("root's file was written through the link:\n%s", b)
			}
			if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
				t.Errorf("root's file's mode changed: %v", fi.Mode())
			}
			if d := diffTrees(before, tree(t, env)); len(d) > 0 {
				t.Errorf("a refused guard changed the environment:\n%s", strings.Join(d, "\n"))
			}
		})
	}

	t.Run("unguard over a link planted after the guard", func(t *testing.T) {
		target, content := secret(t, 0o644)
		env := write(t, filepath.Join(t.TempDir(), "env"), pyenvtest.Spec{Torch: cudaTorch})
		chownTree(t, env, nobody)
		k := guard.Keeper{StateDir: t.TempDir()}
		if _, err := k.Guard(env); err != nil {
			t.Fatal(err)
		}
		// What root's guard made in nobody's environment stays nobody's.
		var st syscall.Stat_t
		must(t, syscall.Lstat(filepath.Join(env, guard.ConstraintsName), &st))
		if st.Uid != nobody {
			t.Errorf("the constraints file made as root belongs to uid %d, not the environment's owner", st.Uid)
		}
		conf := filepath.Join(env, "pip.conf")
		must(t, os.Remove(conf))
		must(t, os.Symlink(target, conf))
		_, err := k.Unguard(env, true)
		var u *guard.UnsafeFileError
		if !errors.As(err, &u) {
			t.Fatalf("Unguard --force over a link = %v; want a refusal", err)
		}
		if b, _ := os.ReadFile(target); string(b) != content {
			t.Errorf("root's file was written through the link:\n%s", b)
		}
		if _, err := k.Clear(env); !errors.As(err, &u) {
			t.Fatalf("Clear over a link = %v; want a refusal", err)
		}
		if b, _ := os.ReadFile(target); string(b) != content {
			t.Errorf("root's file was written through the link by Clear:\n%s", b)
		}
	})
}

// pipConfig is what a real pip reads from the config file at conf, as
// `pip config list` prints it: key=value lines.
func pipConfig(t *testing.T, conf string) string {
	t.Helper()
	py := wheeltest.Python(t)
	home := t.TempDir()
	cmd := exec.Command(py, "-m", "pip", "config", "list")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIP_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "PIP_CONFIG_FILE="+conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pip config list: %v\n%s", err, out)
	}
	return string(out)
}

// TestNewlineInPathSetsNoPipSetting is issue 42's item 3: an environment
// whose path holds a newline and a pip setting gets a pip.conf in which
// pip reads only the constraint, whatever the path says.
func TestNewlineInPathSetsNoPipSetting(t *testing.T) {
	// (A name holds no slash: the URL has none.)
	dir := filepath.Join(t.TempDir(), "x\nindex-url = https:evil.example\n[global]\nno-index = true\r")
	env := write(t, filepath.Join(dir, "env"), pyenvtest.Spec{Torch: cudaTorch})
	k := guard.Keeper{StateDir: t.TempDir()}
	if _, err := k.Guard(env); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(env, "pip.conf")
	got := pipConfig(t, conf)
	for _, l := range strings.Split(got, "\n") {
		key, _, _ := strings.Cut(l, "=")
		if !strings.HasPrefix(l, ":env:") && strings.Contains(key, "index") {
			t.Errorf("pip reads %q from the guard's pip.conf:\n%s", key, got)
		}
	}
	if !strings.Contains(got, "install.constraint='file:///") || !strings.Contains(got, "%0Aindex-url") {
		t.Errorf("pip does not read the constraints file's URL:\n%s", got)
	}
	for _, n := range []string{"pip.conf", guard.ConstraintsName} {
		b, _ := os.ReadFile(filepath.Join(env, n))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "index-url") || strings.ContainsAny(l, "\r") {
				t.Errorf("%s has the path's line in it: %q\n%s", n, l, b)
			}
		}
		if !strings.Contains(string(b), `x\nindex-url = https:evil.example\n[global]\nno-index = true\r/env`) {
			t.Errorf("%s does not name the environment, escaped:\n%s", n, b)
		}
	}
	if _, err := k.Unguard(env, false); err != nil {
		t.Fatal(err)
	}
}

// plant writes a record for env into state as another user would: a
// well-formed record with a good checksum, naming what the planter
// chose. It returns the record's path.
func plant(t *testing.T, state, env string, files []map[string]any) string {
	t.Helper()
	sum := sha256.Sum256([]byte(env))
	dir := filepath.Join(state, "guard", hex.EncodeToString(sum[:8]))
	must(t, os.MkdirAll(dir, 0o700))
	inner, err := json.Marshal(map[string]any{"env": env, "set": "2026-11-28T00:00:00Z", "pins": []string{"torch==2.5.1+cu121"}, "files": files})
	must(t, err)
	isum := sha256.Sum256(inner)
	b, err := json.Marshal(map[string]any{"sha256": hex.EncodeToString(isum[:]), "record": json.RawMessage(inner)})
	must(t, err)
	p := filepath.Join(dir, "record.json")
	must(t, os.WriteFile(p, b, 0o600))
	return p
}

// TestPlantedRecordIsNotFollowed is issue 42's item 4: a record another
// user planted, or one naming files that are not its environment's guard
// files, or one damaged, is a named error; nothing outside the
// environment is touched, and nothing in it either.
func TestPlantedRecordIsNotFollowed(t *testing.T) {
	cases := []struct {
		name string
		// setup plants the record; it returns the state folder.
		setup func(t *testing.T, env, victim string) string
		why   string
	}{
		{"planted by nobody in a 0777 state folder", func(t *testing.T, env, victim string) string {
			state := filepath.Join(t.TempDir(), "state")
			must(t, os.Mkdir(state, 0o700))
			must(t, os.Chmod(state, 0o777))
			plant(t, state, env, []map[string]any{{"path": victim, "created": true, "wrote": "x"}})
			chownTree(t, filepath.Join(state, "guard"), nobody)
			return state
		}, "is not one only you can write"},
		{"record of nobody's in our state folder", func(t *testing.T, env, victim string) string {
			state := t.TempDir()
			p := plant(t, state, env, []map[string]any{{"path": filepath.Join(env, "pip.conf"), "created": true, "wrote": "x"}})
			chownTree(t, p, nobody)
			return state
		}, "not a file only you can write"},
		{"names a file outside the environment", func(t *testing.T, env, victim string) string {
			state := t.TempDir()
			plant(t, state, env, []map[string]any{{"path": victim, "created": true, "wrote": "x"}})
			return state
		}, "is not one of the environment's guard files"},
		{"saved copy outside its folder", func(t *testing.T, env, victim string) string {
			state := t.TempDir()
			plant(t, state, env, []map[string]any{{"path": filepath.Join(env, "pip.conf"), "saved": victim, "mode": 420, "wrote": "x"}})
			return state
		}, "is not in its own folder"},
		{"one byte changed", func(t *testing.T, env, victim string) string {
			state := t.TempDir()
			p := plant(t, state, env, []map[string]any{{"path": filepath.Join(env, "pip.conf"), "created": true, "wrote": "x"}})
			b, _ := os.ReadFile(p)
			must(t, os.WriteFile(p, []byte(strings.Replace(string(b), "pip.conf", "pip.cong", 1)), 0o600))
			return state
		}, "damaged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := write(t, filepath.Join(t.TempDir(), "env"), pyenvtest.Spec{Torch: cudaTorch})
			must(t, os.WriteFile(filepath.Join(env, "pip.conf"), []byte("[global]\ntimeout = 60\n"), 0o644))
			victim, content := secret(t, 0o644)
			state := c.setup(t, env, victim)
			before := tree(t, env)
			k := guard.Keeper{StateDir: state}
			for _, force := range []bool{false, true} {
				_, err := k.Unguard(env, force)
				var re *guard.RecordError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "unguard --force") {
					t.Fatalf("Unguard(force %v) = %v; want a RecordError saying %q and naming --force", force, err, c.why)
				}
			}
			if st := k.Read(env); st.Guarded || len(st.Changed) != 1 {
				t.Errorf("Read = %+v; want the record's refusal as a change", st)
			}
			if _, err := k.Guard(env); err == nil {
				t.Error("Guard set a second guard over a record it cannot use")
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != content {
				t.Errorf("the file the record named outside the environment was touched: %v %q", err, b)
			}
			if d := diffTrees(before, tree(t, env)); len(d) > 0 {
				t.Errorf("the environment changed:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestUntrustedStateFolderRecordsNothing: a guard is not recorded in a
// state folder another user can write (its record could be swapped
// later), and nothing is written in the environment.
func TestUntrustedStateFolderRecordsNothing(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	must(t, os.Mkdir(state, 0o700))
	must(t, os.Chmod(state, 0o777))
	env := write(t, filepath.Join(t.TempDir(), "env"), pyenvtest.Spec{Torch: cudaTorch})
	before := tree(t, env)
	_, err := guard.Keeper{StateDir: state}.Guard(env)
	var u *owned.Untrusted
	if !errors.As(err, &u) || u.Path != state {
		t.Fatalf("Guard with a 0777 state folder = %v; want it refused naming %s", err, state)
	}
	if d := diffTrees(before, tree(t, env)); len(d) > 0 {
		t.Errorf("the environment changed:\n%s", strings.Join(d, "\n"))
	}
}
