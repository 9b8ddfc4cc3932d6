//go:build linux

package fix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// The test binary doubles as a `gpucanary fix` to kill: with
// GPUCANARY_FIX_HELPER set to a JSON helperJob it runs that repair.
func TestMain(m *testing.M) {
	if handled, code := GuardianMain(); handled {
		os.Exit(code)
	}
	if job := os.Getenv("GPUCANARY_FIX_HELPER"); job != "" {
		os.Exit(runHelperJob(job))
	}
	os.Exit(m.Run())
}

type helperJob struct {
	Plan     fixplan.Plan
	Env      string
	Journal  string
	Environ  []string
	Guardian string
	// FileLimit, when set, is the helper's RLIMIT_FSIZE in bytes: a
	// larger write fails (EFBIG) as one on a full disk does.
	FileLimit uint64
}

func runHelperJob(raw string) int {
	var job helperJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	env, err := pyenv.Inspect(job.Env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if job.FileLimit > 0 {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: job.FileLimit, Max: job.FileLimit}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	_, err = Run(context.Background(), job.Plan, env, RunOptions{Journal: fixjournal.NewJournal(job.Journal, env.Path, time.Now()), Env: job.Environ, Guardian: job.Guardian})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// block is where the cu124 wheel writes a file after torch's and before
// its dist-info; pip run under wheeltest.HoldInstall stops there.
const block = "gpucanary_block/hold"

var a100 = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}

// interruptCase is a venv holding torch 2.5.1+cpu, installed by real pip
// from a local index that also serves a cu124 build which pip can be
// held inside of.
type interruptCase struct {
	py, venv string
	environ  []string
}

func newInterruptCase(t *testing.T) interruptCase {
	t.Helper()
	py := wheeltest.Python(t)
	idx := wheeltest.NewIndex(t.TempDir())
	cu := wheeltest.Torch("2.5.1", "cu124")
	cu.Block = block
	for tag, s := range map[string]wheeltest.Spec{"cpu": wheeltest.Torch("2.5.1", "cpu"), "cu124": cu} {
		if err := idx.Add(tag, s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	c := interruptCase{py: py, venv: filepath.Join(t.TempDir(), ".venv")}
	wheeltest.NewVenv(t, py, c.venv)
	wheeltest.Pip(t, py, c.venv, "install", "--index-url", srv.URL+"/cpu", "torch==2.5.1+cpu")
	c.environ = append(os.Environ(), "PIP_NO_CACHE_DIR=1", "PIP_CONFIG_FILE=/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	t.Setenv("GPUCANARY_TEST_INDEX", srv.URL)
	return c
}

func (c interruptCase) plan(t *testing.T) (fixplan.Plan, *pyenv.Env) {
	t.Helper()
	env, err := pyenv.Inspect(c.venv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: a100, IndexBase: os.Getenv("GPUCANARY_TEST_INDEX"), HostPython: c.py,
		LookPath: func(string) (string, error) { return "", exec.ErrNotFound }})
	if err != nil || p.Blocked != "" || p.Variant != "cu124" {
		t.Fatalf("plan: %+v, %v", p, err)
	}
	return p, env
}

// groupGone waits until no live process is left in the installer's
// process group. A member that died is a zombie until its parent reaps
// it, and an orphan's new parent (PID 1 in a container) may never do so:
// zombies count as gone, as kill(-pgid, 0) cannot tell.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		live := liveMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the installer's process group %d is still alive a minute on: %s", pgid, strings.Join(live, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveMembers lists the processes of group pgid that are not zombies,
// as "PID state command".
func liveMembers(pgid int) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[2] != fmt.Sprint(pgid) || f[0] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+f[0]+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// TestInterruptedRepairSaysWhatItLeft: a repair cancelled while pip is
// between removing the CPU torch and installing the CUDA one asks pip to
// stop as Ctrl-C does, waits for its whole group, then says what state
// the environment is really in (pip does not roll back on Ctrl-C) with
// the rollback command; a rerun finishes the repair and clears the stash
// pip left.
func TestInterruptedRepairSaysWhatItLeft(t *testing.T) {
	c := newInterruptCase(t)
	p, env := c.plan(t)
	hold, held := wheeltest.HoldInstall(t, block)
	journals := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res fixjournal.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, p, env, RunOptions{Journal: fixjournal.NewJournal(journals, env.Path, time.Now()), Env: append(c.environ, hold...)})
		done <- outcome{res, err}
	}()
	held()
	cancel() // Ctrl-C, SIGTERM to gpucanary fix, or Cancel in the tray
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.res
	if res.Fixed || !res.Interrupted || !strings.Contains(res.Why, "interrupted") || !strings.Contains(res.Why, "SIGINT") {
		t.Errorf("result: fixed %v, interrupted %v, why %q", res.Fixed, res.Interrupted, res.Why)
	}
	if len(res.Broken) == 0 || !strings.Contains(strings.Join(res.Broken, "\n"), "pip left ~orch") {
		t.Errorf("the half-installed state is not reported: %q", res.Broken)
	}
	if !strings.Contains(res.Rollback, "torch==2.5.1+cpu") {
		t.Errorf("rollback = %q", res.Rollback)
	}
	rec, err := fixjournal.ReadJournal(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Installer == 0 || rec.Result == nil || !rec.Result.Interrupted || rec.Interrupted || len(rec.Output) == 0 {
		t.Errorf("journal: installer %d, result %+v, interrupted %v, %d lines", rec.Installer, rec.Result, rec.Interrupted, len(rec.Output))
	}
	groupGone(t, rec.Installer)

	// The rerun (not held): the plan lists pip's stash, and once the new
	// torch is verified the stash goes too.
	p2, env2 := c.plan(t)
	if len(p2.Cleanup) == 0 || !slices.ContainsFunc(p2.Cleanup, func(s string) bool { return filepath.Base(s) == "~orch" }) {
		t.Fatalf("the rerun's plan does not list pip's stash: %q", p2.Cleanup)
	}
	res2, err := Run(context.Background(), p2, env2, RunOptions{Env: c.environ})
	if err != nil {
		t.Fatal(err)
	}
	if !res2.Fixed || !slices.Equal(res2.Cleaned, p2.Cleanup) || len(res2.Broken) > 0 {
		t.Fatalf("rerun: fixed %v (%s), cleaned %q of %q, broken %q", res2.Fixed, res2.Why, res2.Cleaned, p2.Cleanup, res2.Broken)
	}
	after, err := pyenv.Inspect(c.venv)
	if err != nil {
		t.Fatal(err)
	}
	if tp := after.Torch(); tp == nil || tp.Version != "2.5.1+cu124" || len(tp.Problems) > 0 || len(after.Problems) > 0 {
		t.Errorf("after the rerun: %+v, problems %+v", tp, after.Problems)
	}
}

// TestKilledRepairStopsItsInstaller: kill -9 of the process running a
// repair stops the installer too, and the journal, written as the run
// went, shows the run as interrupted. The installer is the host pip
// behind whatever python3 is on PATH (a pyenv shim here: a shell script
// between us and pip), which runs a second pip under the venv's python:
// only the guardian, told by the kernel, can stop that whole group.
func TestKilledRepairStopsItsInstaller(t *testing.T) {
	c := newInterruptCase(t)
	p, env := c.plan(t)
	hold, held := wheeltest.HoldInstall(t, block)
	journals := t.TempDir()
	job, err := json.Marshal(helperJob{Plan: p, Env: env.Path, Journal: journals, Environ: append(c.environ, hold...), Guardian: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GPUCANARY_FIX_HELPER="+string(job))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	held()
	rec, err := fixjournal.LastJournal(journals, env.Path)
	if err != nil || rec == nil || rec.Installer == 0 || rec.Recorder != cmd.Process.Pid {
		t.Fatalf("journal while running: %+v, %v", rec, err)
	}
	if rec.Interrupted || rec.Result != nil {
		t.Errorf("a running repair reads as interrupted %v / finished %v", rec.Interrupted, rec.Result != nil)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waited = true
	groupGone(t, rec.Installer)

	rec, err = fixjournal.LastJournal(journals, env.Path)
	if err != nil || rec == nil {
		t.Fatalf("journal after the kill: %+v, %v", rec, err)
	}
	if !rec.Interrupted || rec.Result != nil || len(rec.Output) == 0 || !strings.Contains(rec.Rollback, "torch==2.5.1+cpu") {
		t.Errorf("journal after the kill: interrupted %v, result %+v, %d lines, rollback %q", rec.Interrupted, rec.Result, len(rec.Output), rec.Rollback)
	}
}

// TestReadJournalIgnoresACutLine: a crash mid-write leaves part of a
// line; the rest still reads.
func TestReadJournalIgnoresACutLine(t *testing.T) {
	j := fixjournal.NewJournal(t.TempDir(), "/home/ada/llm/.venv", time.Now())
	j.Begin(fixplan.Plan{Env: "/home/ada/llm/.venv"}, map[string]string{"torch": "2.5.1+cpu"}, "pip install torch==2.5.1+cpu")
	j.Line("Collecting torch")
	f, err := os.OpenFile(j.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-11-23T10:00:00Z","event":"out`)
	f.Close()
	rec, err := fixjournal.ReadJournal(j.Path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Env != "/home/ada/llm/.venv" || !slices.Equal(rec.Output, []string{"Collecting torch"}) || rec.Result != nil {
		t.Errorf("read back: %+v", rec)
	}
	// This process recorded it and is alive: not interrupted.
	if rec.Interrupted {
		t.Error("a journal whose recorder runs reads as interrupted")
	}
	if _, err := fixjournal.ReadJournal(filepath.Join(t.TempDir(), "nope.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing journal: %v", err)
	}
}
