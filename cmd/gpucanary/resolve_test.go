package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// uvProjectDir writes a uv project as `uv init` and `uv sync` leave it:
// pyproject.toml, uv.lock and, when withVenv, a .venv uv made holding a
// CPU torch.
func uvProjectDir(t *testing.T, withVenv bool) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pyproject.toml", "[project]\nname = \"demo\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\ndependencies = [\"torch\"]\n")
	write("uv.lock", "version = 1\nrequires-python = \">=3.11\"\n\n[[package]]\nname = \"demo\"\nversion = \"0.1.0\"\nsource = { virtual = \".\" }\n")
	if withVenv {
		if err := pyenvtest.Write(filepath.Join(root, ".venv"), pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "uv"}}); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestPathsAsTyped: from a uv project folder, `check .` checks its .venv
// and says so, `check .venv/bin/python` checks the same environment, and
// `fix --pin-index .` edits the project's pyproject.toml.
func TestPathsAsTyped(t *testing.T) {
	fixEnvSetup(t)
	root := uvProjectDir(t, true)
	t.Chdir(root)
	sim := simFile(t, simA100)

	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", ".")
	if code != exitFound || !strings.Contains(out, "resolved: . → ./.venv (uv project)") || !strings.Contains(out, "TORCH_CPU_BUILD") ||
		strings.Contains(out, "ENV_UNREADABLE") {
		t.Errorf("check . exit %d:\n%s%s", code, out, stderr)
	}

	out, _, _ = runCLI(t, "--gpu-sim", sim, "check", "--json", ".")
	var res monitor.CheckResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("check --json .: %v\n%s", err, out)
	}
	if len(res.Envs) != 1 || res.Envs[0].Path != filepath.Join(root, ".venv") || res.Envs[0].From != ". → ./.venv (uv project)" || !res.Complete {
		t.Errorf("check --json . = %+v", res)
	}

	out, _, _ = runCLI(t, "--gpu-sim", sim, "check", filepath.Join(".venv", "bin", "python"))
	if !strings.Contains(out, "TORCH_CPU_BUILD") || !strings.Contains(out, filepath.Join(root, ".venv")) {
		t.Errorf("check .venv/bin/python:\n%s", out)
	}

	out, stderr, code = runCLI(t, "--gpu-sim", sim, "fix", "--pin-index", ".")
	if code != exitOK || !strings.Contains(out, "Resolved . → ./.venv (uv project)") || !strings.Contains(out, "uv lock") {
		t.Fatalf("fix --pin-index . exit %d:\n%s%s", code, out, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(root, "pyproject.toml"))
	if !strings.Contains(string(b), `torch = [{ index = "pytorch-cu124"`) {
		t.Errorf("pyproject.toml after fix --pin-index .:\n%s", b)
	}
}

// TestResolvedNamesThePathGiven: check's "resolved:" line (and its JSON's
// found_from) and fix's "Resolved" name the path as it was typed and
// what it resolved to, whichever path names the project: not "./ →
// ./.venv" for every one of them.
func TestResolvedNamesThePathGiven(t *testing.T) {
	fixEnvSetup(t)
	root := uvProjectDir(t, true)
	t.Chdir(filepath.Dir(root))
	sim := simFile(t, simA100)
	name := filepath.Base(root)
	for arg, want := range map[string]string{
		name:                                    name + " → " + filepath.Join(name, ".venv") + " (uv project)",
		"./" + name:                             "./" + name + " → ./" + filepath.Join(name, ".venv") + " (uv project)",
		filepath.Join(name, "pyproject.toml"):   filepath.Join(name, "pyproject.toml") + " → " + filepath.Join(name, ".venv") + " (uv project)",
		root:                                    root + " → " + filepath.Join(root, ".venv") + " (uv project)",
		filepath.Join(name, ".venv/bin/python"): filepath.Join(name, ".venv/bin/python") + " → " + filepath.Join(root, ".venv") + " (the environment of this interpreter)",
	} {
		out, stderr, _ := runCLI(t, "--gpu-sim", sim, "check", arg)
		if !strings.Contains(out, "resolved: "+want+"\n") {
			t.Errorf("check %s: want the line %q:\n%s%s", arg, "resolved: "+want, out, stderr)
		}
		out, _, _ = runCLI(t, "--gpu-sim", sim, "check", "--json", arg)
		var res monitor.CheckResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Envs) != 1 || res.Envs[0].From != want {
			t.Errorf("check --json %s: want found_from %q (%v):\n%s", arg, want, err, out)
		}
		out, _, _ = runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", arg)
		if !strings.Contains(out, "Resolved "+want+"\n") {
			t.Errorf("fix --dry-run %s: want %q:\n%s", arg, "Resolved "+want, out)
		}
	}
	out, _, _ := runCLI(t, "--gpu-sim", sim, "check", filepath.Join(name, ".venv"))
	if strings.Contains(out, "resolved:") {
		t.Errorf("check of the environment itself says it was resolved:\n%s", out)
	}
}

// TestProjectWithoutEnvironment: a uv project not yet synced is a warning
// that says how to create its environment, not ENV_UNREADABLE; fix
// refuses it with the same advice.
func TestProjectWithoutEnvironment(t *testing.T) {
	fixEnvSetup(t)
	root := uvProjectDir(t, false)
	t.Chdir(root)
	sim := simFile(t, simA100)
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", ".")
	if code != exitOK || !strings.Contains(out, "ENV_NOT_CREATED") || !strings.Contains(out, "uv sync") ||
		strings.Contains(out, "ENV_UNREADABLE") || strings.Contains(out, "torch is not installed") {
		t.Errorf("check . exit %d:\n%s%s", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "--gpu-sim", sim, "fix", "--pin-index", ".")
	if code != exitUsage || !strings.Contains(stderr, "no environment yet") || !strings.Contains(stderr, "uv sync") {
		t.Errorf("fix --pin-index . exit %d:\n%s%s", code, out, stderr)
	}
}
