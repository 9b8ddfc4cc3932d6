package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestGuardCheckFixUnguard runs the commands over a venv that real pip
// filled from a local PyTorch-style index: guard, check showing it, a CPU
// torch refused by pip, fix to another CUDA build through the guard
// (lifted and set again for the new build), and unguard, after which
// the CPU install goes through.
func TestGuardCheckFixUnguard(t *testing.T) {
	fixEnvSetup(t)
	py := wheeltest.Python(t)
	_, base := pytorchIndex(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/cu121", "torch==2.5.1+cu121", "torchvision==0.20.1+cu121")
	sim := simFile(t, simA100)

	out, stderr, code := runCLI(t, "guard", venv)
	if code != 0 || !strings.Contains(out, "torch==2.5.1+cu121, torchvision==0.20.1+cu121") {
		t.Fatalf("guard: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, _ = runCLI(t, "--gpu-sim", sim, "check", "--json", venv)
	var res struct {
		Envs []map[string]any `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Envs) != 1 || res.Envs[0]["guarded"] != true {
		t.Fatalf("check --json does not say guarded (%v):\n%s", err, out)
	}
	if out, _, _ := runCLI(t, "--gpu-sim", sim, "check", venv); !strings.Contains(out, "guarded") {
		t.Errorf("check does not say guarded:\n%s", out)
	}

	pip := func(args ...string) (string, error) {
		cmd := exec.Command(py, append([]string{"-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "--disable-pip-version-check", "--no-input", "install", "--index-url", base + "/cpu"}, args...)...)
		cmd.Env = append(os.Environ(), "PIP_NO_CACHE_DIR=1")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if out, err := pip("torch==2.5.1+cpu"); err == nil {
		t.Fatalf("a CPU torch went through the guard:\n%s", out)
	}
	if torch, _ := installed(t, venv); torch != "2.5.1+cu121" {
		t.Fatalf("torch %s after the refused install", torch)
	}

	out, stderr, code = runCLI(t, "--gpu-sim", sim, "fix", "--yes", "--variant", "cu124", "--index-base", base, venv)
	if code != 0 {
		t.Fatalf("fix on a guarded venv: exit %d\n%s\n%s", code, out, stderr)
	}
	if torch, vision := installed(t, venv); torch != "2.5.1+cu124" || vision != "0.20.1+cu124" {
		t.Fatalf("after fix: %s, %s\n%s", torch, vision, out)
	}
	if !strings.Contains(out, "set the guard again") {
		t.Errorf("fix does not say it set the guard again:\n%s", out)
	}
	cons, _ := os.ReadFile(filepath.Join(venv, guard.ConstraintsName))
	if !strings.Contains(string(cons), "torch==2.5.1+cu124") {
		t.Errorf("the guard after fix holds:\n%s", cons)
	}

	out, stderr, code = runCLI(t, "unguard", venv)
	if code != 0 {
		t.Fatalf("unguard: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, n := range []string{"pip.conf", guard.ConstraintsName} {
		if _, err := os.Stat(filepath.Join(venv, n)); err == nil {
			t.Errorf("%s is still there after unguard", n)
		}
	}
	if out, err := pip("torch==2.5.1+cpu"); err != nil {
		t.Fatalf("after unguard: %v\n%s", err, out)
	}
	if _, _, code := runCLI(t, "unguard", venv); code != exitFound {
		t.Errorf("unguard of an unguarded venv: exit %d", code)
	}
}

// TestUnguardForce is issue 42's item 10 at the command line: a guard
// whose record is gone made unguard say "nothing to lift" over a pip.conf
// that still held it, and one whose record is corrupt made guard and
// unguard both fail with no way forward. Now each says that --force
// exists, and unguard --force lifts the guard by its marks, naming what
// it did.
func TestUnguardForce(t *testing.T) {
	for _, damage := range []string{"removed", "corrupt"} {
		t.Run(damage, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			env := filepath.Join(t.TempDir(), ".venv")
			if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}); err != nil {
				t.Fatal(err)
			}
			if out, stderr, code := runCLI(t, "guard", env); code != exitOK {
				t.Fatalf("guard: exit %d\n%s%s", code, out, stderr)
			}
			recs, _ := filepath.Glob(filepath.Join(state, "gpucanary", "guard", "*", "record.json"))
			if len(recs) != 1 {
				t.Fatalf("records: %v", recs)
			}
			if damage == "removed" {
				if err := os.Remove(recs[0]); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(recs[0], []byte(`{"sha256":"00","record":{}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runCLI(t, "unguard", env)
			if code != exitFound || !strings.Contains(out+stderr, "unguard --force") || strings.Contains(out, "nothing to lift") {
				t.Fatalf("unguard with the record %s: exit %d; want 1 and a pointer to --force\n%s%s", damage, code, out, stderr)
			}
			out, stderr, code = runCLI(t, "guard", env)
			if code != exitFound || !strings.Contains(stderr, "unguard --force") {
				t.Fatalf("guard with the record %s: exit %d; want 1 and a pointer to --force\n%s%s", damage, code, out, stderr)
			}
			out, stderr, code = runCLI(t, "unguard", "--force", env)
			if code != exitOK || !strings.Contains(out, "by its marks") || !strings.Contains(out, "removed "+filepath.Join(env, "pip.conf")) ||
				!strings.Contains(out, "removed "+filepath.Join(env, guard.ConstraintsName)) {
				t.Fatalf("unguard --force: exit %d\n%s%s", code, out, stderr)
			}
			for _, n := range []string{"pip.conf", guard.ConstraintsName} {
				if _, err := os.Lstat(filepath.Join(env, n)); err == nil {
					t.Errorf("%s is still there after unguard --force", n)
				}
			}
			if out, stderr, code := runCLI(t, "guard", env); code != exitOK {
				t.Fatalf("guard after unguard --force: exit %d\n%s%s", code, out, stderr)
			}
			if out, stderr, code := runCLI(t, "unguard", env); code != exitOK {
				t.Fatalf("unguard: exit %d\n%s%s", code, out, stderr)
			}
			if out, _, code := runCLI(t, "unguard", "--force", env); code != exitFound || !strings.Contains(out, "nothing to lift") {
				t.Errorf("unguard --force with no guard: exit %d\n%s", code, out)
			}
		})
	}
}
