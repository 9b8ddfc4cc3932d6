package fix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// listed is a process list given as it is: the guard's logic on exact
// inputs. The real scanner is used in TestInUseSeesARealProcess.
type listed struct {
	ps  []procs.Proc
	err error
}

func (l listed) Scan(context.Context) ([]procs.Proc, error) { return l.ps, l.err }

func writeEnv(t *testing.T, path string, s pyenvtest.Spec) {
	t.Helper()
	if err := pyenvtest.Write(path, s); err != nil {
		t.Fatal(err)
	}
}

var cpuTorch = pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}

func TestInUse(t *testing.T) {
	env := filepath.Join(t.TempDir(), "llm", ".venv")
	train := procs.Proc{PID: 4242, EnvPath: env, Cmdline: []string{"python", "train.py"}}
	byProgram := procs.Proc{PID: 4343, Cmdline: []string{filepath.Join(env, "bin", "python"), "-m", "serve"}}
	for _, tc := range []struct {
		name string
		list Scanner
		want string // "" for no refusal
	}{
		{"attributed to the environment", listed{ps: []procs.Proc{train}},
			"1 process(es) run from " + env + " and hold torch open: PID 4242 (python train.py); stop them first, or pass --force"},
		{"its program lives inside", listed{ps: []procs.Proc{byProgram, train}},
			"2 process(es) run from " + env + " and hold torch open: PID 4343 (" + byProgram.Command() + "), PID 4242 (python train.py)"},
		{"this process aside", listed{ps: []procs.Proc{{PID: os.Getpid(), EnvPath: env}}}, ""},
		{"a neighbour whose path starts the same", listed{ps: []procs.Proc{
			{PID: 5, EnvPath: env + "2"}, {PID: 6, Cmdline: []string{env + "2/bin/python"}}}}, ""},
		{"another environment", listed{ps: []procs.Proc{{PID: 7, EnvPath: "/elsewhere/.venv"}}}, ""},
		{"a list that cannot be read refuses nothing", listed{err: errors.New("no /proc")}, ""},
		{"no list: no guard", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Service{Processes: tc.list}.InUse(context.Background(), env)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var inUse *InUseError
			if !errors.As(err, &inUse) || inUse.Env != env {
				t.Fatalf("err = %v, want an *InUseError about %s", err, env)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %q\nwant %q", err, tc.want)
			}
		})
	}
}

// TestInUseSeesARealProcess runs a program with VIRTUAL_ENV set to the
// environment, and the guard, reading the real process table, names it.
func TestInUseSeesARealProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process scanner reads /proc")
	}
	env := filepath.Join(t.TempDir(), ".venv")
	writeEnv(t, env, cpuTorch)
	job := exec.Command("sleep", "60")
	job.Env = append(os.Environ(), "VIRTUAL_ENV="+env)
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Process.Kill(); job.Wait() })
	err := Service{Processes: procs.NewSource(procs.Options{})}.InUse(context.Background(), env)
	var inUse *InUseError
	if !errors.As(err, &inUse) || len(inUse.Processes) != 1 || !strings.Contains(inUse.Processes[0], "sleep 60") {
		t.Fatalf("err = %v, want the sleep named", err)
	}
}

func TestServicePlan(t *testing.T) {
	root := t.TempDir()
	env, bare := filepath.Join(root, "a", ".venv"), filepath.Join(root, "b", ".venv")
	writeEnv(t, env, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}})
	writeEnv(t, bare, pyenvtest.Spec{})
	mirror := ""
	s := Service{
		GPU:       func(context.Context) gpu.State { return a100Driver550 },
		IndexBase: func() string { return mirror },
	}
	ctx := context.Background()

	pr, err := s.Prepare(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Env == nil || pr.Env.Path != env || pr.GPU.Driver != a100Driver550.Driver {
		t.Errorf("prepared from env %v and GPU %+v", pr.Env, pr.GPU)
	}
	if pr.Plan.Variant != "cu124" || pr.Plan.Index != fixplan.DefaultIndexBase+"/cu124" {
		t.Errorf("plan = %+v, want cu124 from the official index (A100, driver CUDA 12.4)", pr.Plan)
	}
	// Settings… changes the mirror: the next plan uses it.
	mirror = "https://mirror.example.org/pytorch"
	if p, err := s.Plan(ctx, env); err != nil || p.Index != mirror+"/cu124" {
		t.Errorf("after the mirror changed: %+v, %v", p, err)
	}
	s.Variant = "cu121"
	if p, err := s.Plan(ctx, env); err != nil || p.Variant != "cu121" || !strings.Contains(p.Command(), "torch==2.5.1+cu121") {
		t.Errorf("--variant cu121: %+v, %v", p, err)
	}
	if _, err := s.Plan(ctx, bare); !errors.Is(err, fixplan.ErrNoTorch) {
		t.Errorf("no torch: err = %v, want ErrNoTorch", err)
	}
	if _, err := s.Plan(ctx, filepath.Join(root, "missing")); err == nil || errors.Is(err, fixplan.ErrNoTorch) {
		t.Errorf("no environment: err = %v, want pyenv's error", err)
	}
	// Without a GPU the plan is blocked, not an error.
	if p, err := (Service{}).Plan(ctx, env); err != nil || p.Blocked == "" {
		t.Errorf("no GPU: %+v, %v", p, err)
	}
}

// TestServicePlanNothingToFix: the tray's Plan refuses a healthy
// environment (the rules Verify gives raise nothing a reinstall fixes),
// unless a reinstall is asked for anyway.
func TestServicePlanNothingToFix(t *testing.T) {
	env := filepath.Join(t.TempDir(), ".venv")
	writeEnv(t, env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}})
	var raised []finding.Finding
	s := Service{GPU: func(context.Context) gpu.State { return a100Driver550 },
		Verify: func(*pyenv.Env, gpu.State) []finding.Finding { return raised }}
	ctx := context.Background()
	_, err := s.Plan(ctx, env)
	if !errors.Is(err, ErrNothingToFix) || !strings.Contains(err.Error(), env) || !strings.Contains(err.Error(), "torch 2.5.1+cu121") {
		t.Errorf("healthy: err = %v, want ErrNothingToFix naming the environment and its torch", err)
	}
	if pr, err := s.Prepare(ctx, env); err != nil || !pr.Healthy || !s.NothingToFix(pr) {
		t.Errorf("Prepare: %+v, %v", pr, err)
	}
	for name, asked := range map[string]Service{"forced": {Force: true}, "a variant": {Variant: "cu124"}} {
		asked.GPU, asked.Verify = s.GPU, s.Verify
		if p, err := asked.Plan(ctx, env); err != nil || len(p.Argv) == 0 {
			t.Errorf("%s: %+v, %v", name, p, err)
		}
	}
	raised = []finding.Finding{{Code: finding.CodeGPUArchUnsupported, Severity: finding.SeverityError, Message: "no kernels for sm_80"}}
	if p, err := s.Plan(ctx, env); err != nil || len(p.Argv) == 0 {
		t.Errorf("with a finding raised: %+v, %v", p, err)
	}
	// Without rules to ask, health is unknown: the plan is made.
	if _, err := (Service{GPU: s.GPU}).Plan(ctx, env); err != nil {
		t.Errorf("no rules: %v", err)
	}
}

// runCase is a CPU torch environment and a plan for it whose installer is
// a real process that puts a CUDA build in place: a copy of an environment
// written beside it, so a run needs no index and no pip.
type runCase struct {
	env, marker string
	plan        fixplan.Plan
}

func newRunCase(t *testing.T, s Service) runCase {
	t.Helper()
	root := t.TempDir()
	c := runCase{env: filepath.Join(root, ".venv"), marker: filepath.Join(root, "installer-ran")}
	writeEnv(t, c.env, cpuTorch)
	staged := filepath.Join(root, "staged")
	writeEnv(t, staged, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}})
	pr, err := s.Prepare(context.Background(), c.env)
	if err != nil {
		t.Fatal(err)
	}
	c.plan = pr.Plan
	c.plan.Argv = []string{"/bin/sh", "-c", `echo replacing; touch "$0" && rm -rf "$1" && cp -R "$2" "$1"`, c.marker, c.env, staged}
	return c
}

func TestServiceRun(t *testing.T) {
	if _, err := exec.LookPath("cp"); err != nil {
		t.Skip("no cp")
	}
	gpuNow := func(context.Context) gpu.State { return a100Driver550 }
	ctx := context.Background()

	t.Run("fixed, journaled, verified on the GPU as it is now", func(t *testing.T) {
		journals := filepath.Join(t.TempDir(), "journal")
		var verified []gpu.State
		var mu sync.Mutex
		s := Service{GPU: gpuNow, JournalDir: journals, Verify: func(e *pyenv.Env, g gpu.State) []finding.Finding {
			mu.Lock()
			defer mu.Unlock()
			verified = append(verified, g)
			return nil
		}}
		c := newRunCase(t, s)
		verified = nil // Prepare asked the rules whether there is anything to fix
		var lines []string
		res, err := s.Run(ctx, c.plan, func(l string) { lines = append(lines, l) })
		if err != nil || !res.Fixed {
			t.Fatalf("res = %+v, err = %v", res, err)
		}
		if res.Before["torch"] != "2.5.1+cpu" || res.After["torch"] != "2.5.1+cu124" || !strings.Contains(res.Rollback, "torch==2.5.1+cpu") {
			t.Errorf("res = %+v", res)
		}
		if len(lines) != 1 || lines[0] != "replacing" {
			t.Errorf("installer output = %q", lines)
		}
		if len(verified) != 1 || verified[0].Driver != a100Driver550.Driver {
			t.Errorf("verified against %+v", verified)
		}
		if filepath.Dir(res.Journal) != journals {
			t.Errorf("journal %q is not in %s", res.Journal, journals)
		}
		if rec, err := fixjournal.ReadJournal(res.Journal); err != nil || rec.Result == nil || !rec.Result.Fixed || rec.Env != c.env {
			t.Errorf("journal: %+v, %v", rec, err)
		}
		if rec := s.LastInterrupted(c.env); rec != nil {
			t.Errorf("a finished repair reads as interrupted: %+v", rec)
		}
	})

	t.Run("a finding that remains is not fixed", func(t *testing.T) {
		s := Service{GPU: gpuNow, Verify: func(*pyenv.Env, gpu.State) []finding.Finding {
			return []finding.Finding{{Code: finding.CodeTorchFamilyMismatch, Severity: finding.SeverityError, Message: "torchvision is still CPU"}}
		}}
		c := newRunCase(t, s)
		res, err := s.Run(ctx, c.plan, nil)
		if err != nil || res.Fixed || !strings.Contains(res.Why, "a problem remains: TORCH_FAMILY_MISMATCH") || res.Journal != "" {
			t.Errorf("res = %+v, err = %v", res, err)
		}
	})

	t.Run("refused while the environment runs, unless forced", func(t *testing.T) {
		journals := filepath.Join(t.TempDir(), "journal")
		s := Service{GPU: gpuNow, JournalDir: journals}
		c := newRunCase(t, s)
		s.Processes = listed{ps: []procs.Proc{{PID: 4242, EnvPath: c.env, Cmdline: []string{"python", "train.py"}}}}
		_, err := s.Run(ctx, c.plan, nil)
		var inUse *InUseError
		if !errors.As(err, &inUse) {
			t.Fatalf("err = %v, want an *InUseError", err)
		}
		if _, err := os.Stat(c.marker); err == nil {
			t.Error("the installer ran although the environment was in use")
		}
		if _, err := os.Stat(journals); err == nil {
			t.Error("a refused run left a journal")
		}
		s.Force = true
		if res, err := s.Run(ctx, c.plan, nil); err != nil || !res.Fixed {
			t.Errorf("forced: %+v, %v", res, err)
		}
	})
}

func TestPinIndexAndHint(t *testing.T) {
	root := t.TempDir()
	env := filepath.Join(root, ".venv")
	writeEnv(t, env, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "uv"},
		Vision: &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"}})
	s := Service{GPU: func(context.Context) gpu.State { return a100Driver550 }}
	ctx := context.Background()
	pr, err := s.Prepare(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PinIndex(pr); err == nil || !strings.Contains(err.Error(), "not in a uv project") {
		t.Errorf("no project: %v", err)
	}
	if h := PinHint(env); h != "" {
		t.Errorf("hint without a project: %q", h)
	}

	pyproject := filepath.Join(root, "pyproject.toml")
	if err := os.WriteFile(pyproject, []byte("[project]\nname = \"p\"\nversion = \"0.1.0\"\ndependencies = [\"torch\", \"torchvision\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h := PinHint(env); !strings.Contains(h, pyproject) || !strings.HasSuffix(h, "gpucanary fix --pin-index "+env) {
		t.Errorf("hint = %q", h)
	}
	blocked := pr
	blocked.Plan = fixplan.Plan{Env: env, Blocked: "no NVIDIA driver answered"}
	if _, err := s.PinIndex(blocked); err == nil || !strings.Contains(err.Error(), "(no NVIDIA driver answered); pass --variant") {
		t.Errorf("no variant: %v", err)
	}
	msg, err := s.PinIndex(pr)
	if err != nil || !strings.Contains(msg, "uv lock") {
		t.Fatalf("pin: %q, %v", msg, err)
	}
	b, _ := os.ReadFile(pyproject)
	for _, want := range []string{`torch = [{ index = "pytorch-cu124"`, `torchvision = [{ index = "pytorch-cu124"`, `url = "https://download.pytorch.org/whl/cu124"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("pyproject.toml lacks %s:\n%s", want, b)
		}
	}
	if h := PinHint(env); h != "" {
		t.Errorf("hint once pinned: %q", h)
	}
}

// TestLastInterrupted: a journal whose repair never finished and whose
// recorder is gone is the one the service reports; none without a journal
// folder.
func TestLastInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "journal")
	env := filepath.Join(t.TempDir(), "llm", ".venv")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no true:", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	line := fmt.Sprintf(`{"time":%q,"event":"started","env":%q,"recorder_pid":%d,"plan":{"env":%q}}`+"\n",
		started.Format(time.RFC3339Nano), env, gone.Process.Pid, env)
	path := fixjournal.NewJournal(dir, env, started).Path // 20250301T120000.000Z-NAME.jsonl
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := Service{JournalDir: dir}.LastInterrupted(env)
	if rec == nil || rec.Path != path || !rec.Started.Equal(started) {
		t.Fatalf("LastInterrupted = %+v", rec)
	}
	if rec := (Service{}).LastInterrupted(env); rec != nil {
		t.Errorf("without a journal folder: %+v", rec)
	}
	if rec := (Service{JournalDir: dir}).LastInterrupted(filepath.Join(t.TempDir(), "other")); rec != nil {
		t.Errorf("another environment: %+v", rec)
	}
}

// TestInUseSeesRelativeLaunches: programs of the environment started by
// a relative path, with no VIRTUAL_ENV (`cd /some/dir && env/bin/python
// …`, `./python …` from bin/), are seen by the guard reading the real
// process table: it resolves each program against the process's working
// directory rather than read argv's text. Before, fix went ahead.
func TestInUseSeesRelativeLaunches(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process scanner reads /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	parent := t.TempDir()
	env := filepath.Join(parent, "env")
	writeEnv(t, env, cpuTorch)
	bin := filepath.Join(env, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(bin, "python"))
	if err := os.Symlink(sleep, filepath.Join(bin, "python")); err != nil { // as a venv's python points at the system's
		t.Fatal(err)
	}
	var clean []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VIRTUAL_ENV=") && !strings.HasPrefix(kv, "CONDA_PREFIX=") {
			clean = append(clean, kv)
		}
	}
	other := filepath.Join(t.TempDir(), "other-venv")
	writeEnv(t, other, cpuTorch)
	for _, tc := range []struct {
		name, dir, prog string
		env             []string
	}{
		{"env/bin/python from its parent", parent, "env/bin/python", nil},
		{"./python from bin/", bin, "./python", nil},
		// Another environment is active in the shell: the program still
		// runs from this one.
		{"./python with another VIRTUAL_ENV", bin, "./python", []string{"VIRTUAL_ENV=" + other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := exec.Command(tc.prog, "60")
			job.Dir, job.Env = tc.dir, append(slices.Clone(clean), tc.env...)
			if err := job.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { job.Process.Kill(); job.Wait() }()
			err := Service{Processes: procs.NewSource(procs.Options{})}.InUse(context.Background(), env)
			var inUse *InUseError
			if !errors.As(err, &inUse) || len(inUse.Processes) != 1 || !strings.Contains(inUse.Processes[0], fmt.Sprintf("PID %d", job.Process.Pid)) {
				t.Fatalf("err = %v, want PID %d named", err, job.Process.Pid)
			}
		})
	}
}
