package fix_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// runtimeCase is a local PyTorch-style index serving torch 2.5.1 for cpu
// and cu124 (with the cu124 build's NVIDIA runtime stubs beside it), and
// what a repair needs to run real pip against it.
type runtimeCase struct {
	py      string
	idx     *wheeltest.Index
	base    string
	look    func(string) (string, error)
	environ []string
}

func newRuntimeCase(t *testing.T) runtimeCase {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("torch's nvidia-* requirements apply on x86_64 only")
	}
	c := runtimeCase{py: wheeltest.Python(t), idx: wheeltest.NewIndex(t.TempDir())}
	for _, tag := range []string{"cpu", "cu124"} {
		if err := c.idx.Add(tag, wheeltest.Torch("2.5.1", tag)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(c.idx)
	t.Cleanup(srv.Close)
	c.base = srv.URL
	c.look = func(name string) (string, error) {
		if name == "python3" {
			return c.py, nil
		}
		return "", exec.ErrNotFound
	}
	c.environ = append(os.Environ(), "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")
	return c
}

// venv makes a venv with pins installed by real pip from tag's index,
// with their requirements.
func (c runtimeCase) venv(t *testing.T, tag string, pins ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, c.py, dir)
	wheeltest.Pip(t, c.py, dir, append([]string{"install", "--index-url", c.base + "/" + tag}, pins...)...)
	return dir
}

// plan plans the repair of the environment at dir on an A100 with a CUDA
// 12.4 driver, as `gpucanary fix` does.
func (c runtimeCase) plan(t *testing.T, dir string) (fixplan.Plan, *pyenv.Env) {
	t.Helper()
	env := inspectPath(t, dir)
	p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: gputest.A100D550, IndexBase: c.base, LookPath: c.look})
	if err != nil || p.Blocked != "" {
		t.Fatalf("plan: %+v, %v", p, err)
	}
	return p, env
}

// run carries p out on env, verified by the health rules as `gpucanary
// fix` verifies it.
func (c runtimeCase) run(t *testing.T, p fixplan.Plan, env *pyenv.Env) fixjournal.Result {
	t.Helper()
	opts := rulesOptions(c.base, c.look)
	res, err := fix.Run(context.Background(), p, env, fix.RunOptions{Env: c.environ, Check: func(e *pyenv.Env) []finding.Finding { return fix.Reinstallable(opts)(e, gputest.A100D550) }})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runtimeNames are the NVIDIA runtime wheels the index's cu124 torch
// requires.
func runtimeNames() []string {
	var names []string
	for _, r := range wheeltest.Torch("2.5.1", "cu124").Runtime {
		names = append(names, r.Name)
	}
	return names
}

// forcedNoDeps is p's argv in the form every plan had before:
// --force-reinstall --no-deps after "install".
func forcedNoDeps(argv []string) []string {
	i := slices.Index(argv, "install")
	return slices.Concat(argv[:i+1], []string{"--force-reinstall", "--no-deps"}, argv[i+1:])
}

// TestRepairFromCPUInstallsTheRuntime: a +cpu -> +cu124 repair in an
// environment that never had the NVIDIA runtime installs it (from the
// same index) and is fixed and verified; the forced --no-deps form every
// plan used before leaves torch unable to import, and the verification
// says so (not fixed, TORCH_INSTALL_BROKEN remaining).
func TestRepairFromCPUInstallsTheRuntime(t *testing.T) {
	c := newRuntimeCase(t)
	dir := c.venv(t, "cpu", "torch==2.5.1+cpu")
	p, env := c.plan(t, dir)
	if slices.Contains(p.Argv, "--force-reinstall") || slices.Contains(p.Argv, "--no-deps") {
		t.Fatalf("a change of build is planned forced or without dependencies: %q", p.Argv)
	}
	if !slices.ContainsFunc(p.Reasons, func(r string) bool { return strings.Contains(r, "torch changes build or release") }) {
		t.Errorf("the reasons do not say why this form: %q", p.Reasons)
	}

	copyDir := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", dir, copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}

	res := c.run(t, p, env)
	after := inspectPath(t, dir)
	if !res.Fixed || after.Torch().Version != "2.5.1+cu124" {
		t.Fatalf("not fixed: %+v; torch %s", res, after.Torch().Version)
	}
	for _, n := range runtimeNames() {
		if after.Packages[n] == nil {
			t.Errorf("%s is not installed after the repair", n)
		}
	}
	if ps := after.Torch().Problems; len(ps) != 0 {
		t.Errorf("torch problems after the repair: %+v", ps)
	}

	// The old form, on the copy: torch is replaced, its runtime is not.
	old := p
	old.Env = copyDir
	old.Argv = forcedNoDeps(slices.Clone(p.Argv))
	for i, a := range old.Argv {
		old.Argv[i] = strings.ReplaceAll(a, dir, copyDir)
	}
	res = c.run(t, old, inspectPath(t, copyDir))
	if res.Fixed || !slices.ContainsFunc(res.Remaining, func(r string) bool {
		return strings.HasPrefix(r, finding.CodeTorchInstallBroken+": ") && strings.Contains(r, "not installed: nvidia-")
	}) {
		t.Errorf("--force-reinstall --no-deps counted as fixed, or its missing runtime unseen: %+v", res)
	}
}

// TestRepairPutsBackADeletedRuntimeWheel: a CUDA torch one of whose
// runtime wheels was uninstalled is missing-runtime; its plan installs the
// same pins without --force-reinstall and without --no-deps, and real pip
// then fetches and installs that one wheel and nothing else (torch stays
// as it is).
func TestRepairPutsBackADeletedRuntimeWheel(t *testing.T) {
	c := newRuntimeCase(t)
	dir := c.venv(t, "cu124", "torch==2.5.1+cu124")
	wheeltest.Pip(t, c.py, dir, "uninstall", "-y", "nvidia-cublas-cu12")
	p, env := c.plan(t, dir)
	if got := env.Torch().Problems; len(got) != 1 || got[0].Kind != pyenv.ProblemMissingRuntime || !strings.Contains(got[0].Message, "nvidia-cublas-cu12==12.4.4.1") {
		t.Fatalf("torch problems before: %+v", got)
	}
	if !p.SameBuild || slices.Contains(p.Argv, "--force-reinstall") || slices.Contains(p.Argv, "--no-deps") {
		t.Fatalf("plan: same build %v, argv %q; want the same pins, unforced, with dependencies", p.SameBuild, p.Argv)
	}
	if !slices.ContainsFunc(p.Reasons, func(r string) bool { return strings.Contains(r, "NVIDIA runtime wheels are missing") }) {
		t.Errorf("the reasons do not say why this form: %q", p.Reasons)
	}
	torchFile := filepath.Join(env.Torch().Site, "torch", "version.py")
	before, err := os.Stat(torchFile)
	if err != nil {
		t.Fatal(err)
	}
	fetched := c.idx.Requests()

	res := c.run(t, p, env)
	after := inspectPath(t, dir)
	if !res.Fixed || after.Packages["nvidia-cublas-cu12"] == nil || len(after.Torch().Problems) != 0 {
		t.Fatalf("not repaired: %+v; problems %+v", res, after.Torch().Problems)
	}
	if n := c.idx.Requests() - fetched; n != 1 {
		t.Errorf("pip fetched %d files, want 1: the missing wheel only", n)
	}
	if now, err := os.Stat(torchFile); err != nil || !os.SameFile(before, now) {
		t.Errorf("torch's files were rewritten (%v)", err)
	}
}
