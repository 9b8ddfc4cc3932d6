package demo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestWrite writes the demonstration and reads each environment back as
// GPU Canary does: each is an environment with the torch its line says.
func TestWrite(t *testing.T) {
	d, err := Write(filepath.Join(t.TempDir(), "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Envs) != len(Envs) {
		t.Fatalf("wrote %d environments, want %d", len(d.Envs), len(Envs))
	}
	want := []string{"2.5.1+cu124", "2.5.1+cpu", "2.5.1+cu124", "2.5.1+cu124"}
	for i, path := range d.Envs {
		if !strings.HasPrefix(path, d.Home+string(filepath.Separator)) {
			t.Errorf("%s is not under the demo's home %s", path, d.Home)
		}
		env, err := pyenv.Inspect(path)
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if tp := env.Torch(); tp == nil || tp.Version != want[i] {
			t.Errorf("%s: torch %+v, want %s", path, tp, want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(d.Envs[1]), "pyproject.toml")); err != nil {
		t.Errorf("the uv project has no pyproject.toml: %v", err)
	}
	if b, err := os.ReadFile(d.Scenario); err != nil || !strings.Contains(string(b), "RTX 4090") {
		t.Errorf("the scenario: %v", err)
	}
}

// TestWriteRefusesAFolderInUse: a demo never writes over what is there.
func TestWriteRefusesAFolderInUse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Write into a folder with a file = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine.txt")); string(b) != "keep" {
		t.Fatal("the file in the folder changed")
	}
}

// TestEnviron: the demo's programs run with its home, settings, state,
// cache and GPUs, and with no active environment of the user's; the
// rest of the environment passes through.
func TestEnviron(t *testing.T) {
	d := Demo{Home: "/d/home", Scenario: "/d/gpu-sim.json"}
	env := d.Environ([]string{"HOME=/home/me", "PATH=/usr/bin", "VIRTUAL_ENV=/home/me/.venv", "PYENV_ROOT=/home/me/.pyenv", "XDG_STATE_HOME=/home/me/.st"})
	for _, want := range []string{"HOME=/d/home", "PATH=/usr/bin", "GPUCANARY_GPU_SIM=/d/gpu-sim.json",
		"XDG_STATE_HOME=" + filepath.Join("/d/home", ".local", "state")} {
		if !slices.Contains(env, want) {
			t.Errorf("environ lacks %s: %v", want, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "VIRTUAL_ENV=") || strings.HasPrefix(kv, "PYENV_ROOT=") || kv == "HOME=/home/me" {
			t.Errorf("environ keeps the user's %s", kv)
		}
	}
}
