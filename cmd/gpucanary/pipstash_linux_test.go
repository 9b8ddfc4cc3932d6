//go:build linux

package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestFixAfterTheUsersOwnPipWasKilled: the user's own `pip install
// torch==2.5.1+cu124` over a CPU torch is killed (SIGKILL, as an OOM
// killer or a closed session does) after pip moved the CPU torch aside
// and before it wrote anything of the new one. No journal of GPU
// Canary's exists. check calls it TORCH_INSTALL_BROKEN with the command
// fix then prints and runs: the CUDA build of the stashed release for
// the simulated A100, installed, verified, and pip's stash of torch
// removed, as the journal records; check is clean afterwards.
func TestFixAfterTheUsersOwnPipWasKilled(t *testing.T) {
	py, base, _ := heldIndexVenv(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/cpu", "torch==2.5.1+cpu")
	site := wheeltest.SitePackages(t, venv)

	hold, held := wheeltest.HoldInstall(t, resumeBlock)
	pip := wheeltest.PipCommand(py, venv, "install", "--index-url", base+"/cu124", "torch==2.5.1+cu124")
	pip.Env = append(pip.Env, hold...)
	// pip --python runs itself again under the venv's interpreter: the
	// whole group is killed, the pip that installs with it.
	pip.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := pip.Start(); err != nil {
		t.Fatal(err)
	}
	held() // pip has moved the CPU torch aside and written nothing of the new one
	if err := syscall.Kill(-pip.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = pip.Wait() // killed: its error is the signal
	stash, _ := filepath.Glob(filepath.Join(site, "~*"))
	for i := range stash {
		stash[i] = filepath.Base(stash[i])
	}
	if want := []string{"~orch", "~orch-2.5.1+cpu.dist-info"}; !slices.Equal(stash, want) {
		t.Fatalf("pip's stash after the kill: %q, want %q", stash, want)
	}

	check := programCommand(t, "check", "--json", venv)
	got, _ := check.Output()
	if code := check.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("check --json: exit %d, want 1:\n%s", code, got)
	}
	var rep struct {
		Envs []struct {
			Findings []struct{ Code, Fix string }
		}
	}
	if err := json.Unmarshal(got, &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, got)
	}
	advice := ""
	for _, e := range rep.Envs {
		for _, f := range e.Findings {
			if f.Code == "TORCH_INSTALL_BROKEN" {
				advice = f.Fix
			}
		}
	}
	if !strings.Contains(advice, "torch==2.5.1+cu124") || !strings.Contains(advice, base+"/cu124") {
		t.Fatalf("TORCH_INSTALL_BROKEN's fix %q is not the install of 2.5.1+cu124 from the mirror:\n%s", advice, got)
	}

	fix := programCommand(t, "fix", "--yes", venv)
	out, _ := fix.CombinedOutput()
	if code := fix.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("fix: exit %d:\n%s", code, out)
	}
	// The very command check showed: both name the launcher found on
	// PATH (python3), as the run starts it.
	ran := ""
	for _, l := range strings.Split(string(out), "\n") {
		if c, ok := strings.CutPrefix(l, "  command:   "); ok {
			ran = c
		}
	}
	if ran != advice {
		t.Errorf("fix ran %q, check advised %q", ran, advice)
	}
	for _, want := range []string{
		"pip moved torch 2.5.1+cpu aside",
		"Fixed: torch 2.5.1+cu124",
		"Removed " + filepath.Join(site, "~orch") + ",",
		"Removed " + filepath.Join(site, "~orch-2.5.1+cpu.dist-info") + ",",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("fix's output lacks %q:\n%s", want, out)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(site, "~*")); len(left) > 0 {
		t.Errorf("left in site-packages: %q", left)
	}
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if tp := env.Torch(); tp == nil || tp.Version != "2.5.1+cu124" || tp.CUDA != "12.4" || len(tp.Problems) > 0 || len(env.Problems) > 0 {
		t.Fatalf("after fix: torch %+v, problems %+v", tp, env.Problems)
	}
	j := onlyJournal(t)
	if j.Result == nil || !j.Result.Fixed || len(j.Result.Cleaned) != 2 || j.Plan.Restores != filepath.Join(site, "~orch-2.5.1+cpu.dist-info") {
		t.Errorf("journal: plan %+v, result %+v", j.Plan, j.Result)
	}
	check = programCommand(t, "check", venv)
	if got, _ := check.CombinedOutput(); check.ProcessState.ExitCode() != 0 {
		t.Errorf("check after fix: exit %d:\n%s", check.ProcessState.ExitCode(), got)
	}
}
