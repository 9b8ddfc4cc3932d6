//go:build linux

package main

import (
	"bufio"
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// resumeBlock is the file the cu124 torch wheel writes first: pip held
// there has moved the CPU torch aside (~orch) and written nothing of the
// new one.
const resumeBlock = "gpucanary_block/first"

// interruptedRepair runs `gpucanary fix --yes` on a venv of torch
// 2.5.1+cpu (real pip, a local index whose mirror is set in the
// settings, a simulated A100), holds pip inside the window between its
// uninstall and its install, and sends the fix SIGINT there (Ctrl-C). It
// returns the venv, the fix's output and the python that made the venv.
func interruptedRepair(t *testing.T) (venv, out, py string, idx *wheeltest.Index) {
	t.Helper()
	py, base, idx := heldIndexVenv(t)
	venv = filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/cpu", "torch==2.5.1+cpu")

	hold, held := wheeltest.HoldInstall(t, resumeBlock)
	cmd := programCommand(t, "fix", "--yes", venv)
	cmd.Env = append(cmd.Env, hold...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	held() // pip has moved the CPU torch aside and waits
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if env.Torch() != nil {
		t.Fatalf("held inside the window, torch is still there: %+v", env.Torch())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("the interrupted fix exited %d (%v), want 1:\n%s", code, err, stdout.String())
	}
	return venv, stdout.String(), py, idx
}

// heldIndexVenv serves torch 2.5.1+cpu and a cu124 build that
// HoldInstall(resumeBlock) holds before it writes anything of itself,
// from a local index that the settings name as the mirror, with a
// simulated A100 and pip kept to it. It returns the python that makes
// venvs and the index's base URL.
func heldIndexVenv(t *testing.T) (py, base string, idx *wheeltest.Index) {
	t.Helper()
	fixEnvSetup(t)
	py = wheeltest.Python(t)
	idx = wheeltest.NewIndex(t.TempDir())
	cu := wheeltest.Torch("2.5.1", "cu124")
	cu.Block, cu.BlockFirst = resumeBlock, true
	for tag, s := range map[string]wheeltest.Spec{"cpu": wheeltest.Torch("2.5.1", "cpu"), "cu124": cu} {
		if err := idx.Add(tag, s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "gpucanary", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("index_base = \""+srv.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUCANARY_GPU_SIM", simFile(t, simA100))
	t.Setenv("PIP_NO_CACHE_DIR", "1")
	t.Setenv("PIP_CONFIG_FILE", "/dev/null")
	t.Setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
	return py, srv.URL, idx
}

// indexBase is the mirror heldIndexVenv wrote into the settings.
func indexBase(t *testing.T) string {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "gpucanary", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(string(cfg)), "index_base = "), `"`)
}

// printedCommand is the command the fix printed after "To finish the
// repair:", as its arguments.
func printedCommand(t *testing.T, out string) []string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if sc.Text() == "To finish the repair:" && sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || f[0] != "gpucanary" {
				t.Fatalf("printed command %q", sc.Text())
			}
			return f[1:]
		}
	}
	t.Fatalf("the interrupted fix printed no command to finish it:\n%s", out)
	return nil
}

// TestInterruptedFixFinishes: Ctrl-C between pip's uninstall and install
// leaves no torch; check calls that an error, and the command the fix
// printed, run as printed, finishes the repair from the journal: a
// verified CUDA torch, pip's stash removed, check clean.
func TestInterruptedFixFinishes(t *testing.T) {
	venv, out, _, _ := interruptedRepair(t)
	args := printedCommand(t, out)

	check := programCommand(t, "check", venv)
	got, _ := check.CombinedOutput()
	if code := check.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(got), "TORCH_INSTALL_BROKEN") || !strings.Contains(string(got), "torch is not installed: an install was stopped") {
		t.Errorf("check after the interruption: exit %d, want 1 with TORCH_INSTALL_BROKEN:\n%s", code, got)
	}

	finish := programCommand(t, args...)
	finish.Stdin = strings.NewReader("y\n")
	got, _ = finish.CombinedOutput()
	if code := finish.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("%v: exit %d:\n%s", args, code, got)
	}
	for _, want := range []string{"was interrupted after the installer removed torch", "Fixed: torch 2.5.1+cu124", "Removed "} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the finishing fix lacks %q:\n%s", want, got)
		}
	}
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if tp := env.Torch(); tp == nil || tp.Version != "2.5.1+cu124" || tp.CUDA != "12.4" || len(tp.Problems) > 0 || len(env.Problems) > 0 {
		t.Fatalf("after finishing: torch %+v, problems %+v", tp, env.Problems)
	}
	check = programCommand(t, "check", venv)
	if got, _ := check.CombinedOutput(); check.ProcessState.ExitCode() != 0 {
		t.Errorf("check after finishing: exit %d:\n%s", check.ProcessState.ExitCode(), got)
	}
}

// TestLeftoversOfAnInterruptedFixAreCleared: when a CUDA torch was
// installed by hand after the interruption, beside pip's stash, fix has
// nothing to reinstall but removes the stash the interrupted repair
// left.
func TestLeftoversOfAnInterruptedFixAreCleared(t *testing.T) {
	venv, _, py, _ := interruptedRepair(t)
	wheeltest.Pip(t, py, venv, "install", "--index-url", indexBase(t)+"/cu124", "torch==2.5.1+cu124")
	stashes, _ := filepath.Glob(filepath.Join(wheeltest.SitePackages(t, venv), "~*"))
	if len(stashes) == 0 {
		t.Fatal("no stash beside the new torch to clear")
	}
	cmd := programCommand(t, "fix", "--yes", venv)
	got, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(string(got), "Nothing to fix") || !strings.Contains(string(got), "which an interrupted repair had left") {
		t.Fatalf("fix: exit %d:\n%s", code, got)
	}
	if left, _ := filepath.Glob(filepath.Join(wheeltest.SitePackages(t, venv), "~*")); len(left) > 0 {
		t.Errorf("left in site-packages: %q", left)
	}
}
