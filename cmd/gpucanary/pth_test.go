package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// TestCheckExecInPthIsPathCode: a .pth import line that runs code built
// at run time (exec of base64, which here puts a shared CPU torch first)
// is IMPORT_PATH_CODE: GPU Canary cannot tell which torch Python
// imports, so it never says OK with the environment's own CUDA build
// (issue 32, L13).
func TestCheckExecInPthIsPathCode(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	env, shared := filepath.Join(dir, "venv"), filepath.Join(dir, "shared")
	if err := writeSpec(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	if err := writeSpec(shared, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	if out, _, code := runCLI(t, "--gpu-sim", sim, "check", env); code != 0 {
		t.Fatalf("before the .pth line: exit %d\n%s", code, out)
	}
	sharedSite := filepath.Join(shared, "lib", "python3.11", "site-packages")
	code := base64.StdEncoding.EncodeToString([]byte("sys.path.insert(0, " + strconv.Quote(sharedSite) + ")"))
	line := "import sys;exec(__import__('base64').b64decode('" + code + "'))\n"
	if err := os.WriteFile(filepath.Join(env, "lib", "python3.11", "site-packages", "zz-hidden.pth"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, exit := runCLI(t, "--gpu-sim", sim, "check", "--json", env)
	var r struct {
		Envs []struct {
			Verdict  string                           `json:"verdict"`
			Findings []struct{ Code, Message string } `json:"findings"`
		} `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v; stderr %s\n%s", err, stderr, out)
	}
	found := false
	for _, f := range r.Envs[0].Findings {
		found = found || f.Code == "IMPORT_PATH_CODE" && strings.Contains(f.Message, "zz-hidden.pth")
	}
	if len(r.Envs) != 1 || !found || strings.EqualFold(r.Envs[0].Verdict, "ok") {
		t.Errorf("check --json: exit %d, want IMPORT_PATH_CODE naming zz-hidden.pth and a verdict other than OK\n%s", exit, out)
	}
}
