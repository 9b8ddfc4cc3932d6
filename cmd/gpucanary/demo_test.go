package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/monitortest"
)

// TestDemoCLIGolden runs `gpucanary demo --cli` as a user does, on a
// machine whose own environments (the developer's, CI's) must not show:
// the output is the demonstration's four environments on its two
// simulated GPUs, every time.
func TestDemoCLIGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := programCommand(t, "demo", "--cli", "--dir", dir)
	bin := monitortest.UVOnPath(t) // uv's command, whatever this machine has
	cmd.Env = append(cmd.Env, "NO_COLOR=1", "VIRTUAL_ENV="+t.TempDir(), "PATH="+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo --cli: %v\n%s", err, out)
	}
	got := strings.ReplaceAll(string(out), dir, "$DEMO")
	got = strings.ReplaceAll(got, filepath.Join(bin, "uv"), "uv")
	for _, want := range []string{"[simulated]", "TORCH_CPU_BUILD", "LLAMA_CPP_CPU_BUILD", "4 environments checked"} {
		if !strings.Contains(got, want) {
			t.Errorf("demo --cli does not say %q:\n%s", want, got)
		}
	}
	golden := filepath.Join("testdata", "demo-cli.txt.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("demo --cli differs from %s (go test -run TestDemoCLIGolden -update rewrites it):\n%s", golden, got)
	}
	// What the user has is neither read nor written: the demonstration's
	// settings, state and cache are inside its folder.
	for _, sub := range []string{".config", ".local/state"} {
		if _, err := os.Stat(filepath.Join(dir, "home", sub)); err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
	}
}

// TestDemoRefusesAFolderInUse: the demo writes only into a new or empty
// folder, and says so with exit status 2.
func TestDemoRefusesAFolderInUse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "demo", "--cli", "--dir", dir)
	if code != exitUsage || !strings.Contains(stderr, "not empty") {
		t.Fatalf("demo into a folder in use: exit %d, %q", code, stderr)
	}
}
