package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCheckTorchThroughPth: `gpucanary check ENV` where ENV has no torch
// of its own but a .pth file puts a shared site holding a CPU torch on
// its import path: that torch is read and judged (TORCH_CPU_BUILD on a
// GPU machine, exit 1), never "torch is not installed" with exit 0.
func TestCheckTorchThroughPth(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	env, shared := filepath.Join(dir, "venv"), filepath.Join(dir, "shared")
	if err := writeSpec(env, pyenvtest.Spec{}); err != nil {
		t.Fatal(err)
	}
	if err := writeSpec(shared, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}); err != nil {
		t.Fatal(err)
	}
	sharedSite := filepath.Join(shared, "lib", "python3.11", "site-packages")
	if err := os.WriteFile(filepath.Join(env, "lib", "python3.11", "site-packages", "shared.pth"), []byte(sharedSite+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", "--json", env)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s\n%s", code, stderr, out)
	}
	var r struct {
		Envs []struct {
			Packages map[string]struct{ Version, Site string } `json:"packages"`
			Findings []struct{ Code string }                   `json:"findings"`
		} `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Envs) != 1 || r.Envs[0].Packages["torch"].Version != "2.5.1+cpu" || r.Envs[0].Packages["torch"].Site != sharedSite ||
		len(r.Envs[0].Findings) == 0 || r.Envs[0].Findings[0].Code != "TORCH_CPU_BUILD" {
		t.Errorf("check --json = %s", out)
	}
	out, _, code = runCLI(t, "--gpu-sim", sim, "check", env)
	if code != 1 || !strings.Contains(out, "2.5.1+cpu") || !strings.Contains(out, "TORCH_CPU_BUILD") || strings.Contains(out, "not installed") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
}
