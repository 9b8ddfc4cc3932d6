package fix_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// install is one pip install into a source environment: pins from one
// index tag.
type install struct {
	tag  string
	pins []string
}

// source is an environment the matrix starts from.
type source struct {
	name     string
	installs []install
	// uv makes the environment uv's (pyvenv.cfg's uv line, INSTALLER uv):
	// its plans go through uv.
	uv bool
	// noDeps installs with --no-deps: a CUDA torch without the NVIDIA
	// runtime wheels it requires.
	noDeps bool
	// spoil changes the installed files (a half-deleted torch, a stash).
	spoil func(t *testing.T, site string)
	// oldDrivers judges it on the machines with older drivers too.
	oldDrivers bool
	// firstOnly judges it on the first machine only (an A100 on a driver
	// for CUDA 12.4), where its repair keeps the build: the other
	// machines' upgrades are the CPU torch's, with a runtime to install
	// all the same.
	firstOnly bool
}

// matrixMachines are the machines the matrix judges on: single GPUs with
// drivers of several ages, and mixed machines (issue 16's A100 beside an
// RTX 5090, awake or asleep; a Kepler beside a Blackwell, which no torch
// runs on).
type matrixMachine struct {
	name      string
	mixed     bool
	oldDriver bool // only for sources with oldDrivers
	g         gpu.State
}

var matrixMachines = []matrixMachine{
	{"A100, driver CUDA 12.4", false, false, gputest.A100D550},
	{"A100, driver CUDA 12.2", false, true, gputest.A100D535},
	{"A100, driver CUDA 11.8", false, true, gpu.State{Driver: "520.61.05", CUDADriver: "11.8", Devices: []gpu.Device{gputest.Dev("NVIDIA A100-SXM4-40GB", "8.0")}}},
	{"RTX 5090", false, false, gputest.RTX5090},
	{"A100 and RTX 5090", true, false, gputest.A100And5090},
	{"A100 asleep and RTX 5090", true, false, gputest.Asleep5090},
	{"Tesla K80 and RTX 5090", true, false, gputest.K80And5090},
}

var matrixSources = []source{
	{name: "CPU torch", oldDrivers: true, installs: []install{{"cpu", []string{"torch==2.5.1+cpu", "torchvision==0.20.1+cpu"}}}},
	{name: "cu124 torch", oldDrivers: true, installs: []install{{"cu124", []string{"torch==2.5.1+cu124", "torchaudio==2.5.1+cu124"}}}},
	{name: "torchvision of another release", installs: []install{{"cu121", []string{"torch==2.5.1+cu121", "torchvision==0.19.1+cu121"}}}},
	{name: "CPU torchvision beside CUDA torch", installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}, {"cpu", []string{"torchvision==0.20.1+cpu"}}}},
	{name: "ROCm torch", installs: []install{{"rocm6.2", []string{"torch==2.5.1+rocm6.2", "torchvision==0.20.1+rocm6.2"}}}},
	{name: "XPU torch", installs: []install{{"xpu", []string{"torch==2.7.1+xpu"}}}},
	{name: "torch 1.13.1+cu117", installs: []install{{"cu117", []string{"torch==1.13.1+cu117", "torchvision==0.14.1+cu117"}}}},
	{name: "torch 1.4.0 (CUDA 10.1, PTX only on Ampere)", installs: []install{{"cu101", []string{"torch==1.4.0"}}}},
	{name: "torch 2.9.1+cu130", oldDrivers: true, installs: []install{{"cu130", []string{"torch==2.9.1+cu130"}}}},
	{name: "torch 2.9.1+cu126", installs: []install{{"cu126", []string{"torch==2.9.1+cu126"}}}},
	{name: "CPU torch 2.9.1", installs: []install{{"cpu", []string{"torch==2.9.1+cpu"}}}},
	{name: "half-deleted cu124 torch", installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}},
		spoil: func(t *testing.T, site string) { removeAll(t, filepath.Join(site, "torch", "lib", "libtorch_cuda.so")) }},
	{name: "cu124 torch with pip's stash left", installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}},
		spoil: func(t *testing.T, site string) { writeFile(t, filepath.Join(site, "~orch", "__init__.py"), "") }},
	{name: "cu124 torch installed with --no-deps", noDeps: true, firstOnly: true, installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}}},
	{name: "cu124 torch with another cuDNN", firstOnly: true, installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}, {"cu124", []string{"nvidia-cudnn-cu12==9.5.1.17"}}}},
	{name: "half-deleted cu124 torch installed with --no-deps", noDeps: true, firstOnly: true, installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}},
		spoil: func(t *testing.T, site string) { removeAll(t, filepath.Join(site, "torch", "lib", "libtorch_cuda.so")) }},
	{name: "uv: CPU torch", uv: true, installs: []install{{"cpu", []string{"torch==2.5.1+cpu"}}}},
	{name: "uv: cu124 torch installed with --no-deps", uv: true, noDeps: true, firstOnly: true, installs: []install{{"cu124", []string{"torch==2.5.1+cu124"}}}},
	{name: "uv: cu124 torch", uv: true, oldDrivers: true, installs: []install{{"cu124", []string{"torch==2.5.1+cu124", "torchvision==0.20.1+cu124"}}}},
}

// TestPlansClearTheirFindings is issue 16's property over the finding
// matrix: every finding a reinstall fixes, on every machine, either comes
// with the command of the plan `gpucanary fix` makes, and that plan,
// carried out by real pip (or uv) from a local index on a copy of the
// environment, leaves no such finding (nor one as bad) under the same
// rules on the same machine, and nothing it did not warn of; or comes
// with no command, and then no plan can be made or the plan, carried out,
// would leave it. It also counts what it covered, so that it cannot pass
// by finding nothing.
func TestPlansClearTheirFindings(t *testing.T) {
	py := wheeltest.Python(t)
	idx := matrixIndex(t)
	srv := httptest.NewServer(idx)
	defer srv.Close()
	bin := t.TempDir()
	uv := wheeltest.UV(t, py, bin)
	look := func(name string) (string, error) {
		switch name {
		case "uv":
			return uv, nil
		case "python3":
			return py, nil
		}
		return "", exec.ErrNotFound
	}
	opts := rulesOptions(srv.URL, look)
	runEnv := append(os.Environ(), "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")

	// Each source runs in parallel with the others; on its machines in
	// turn, so that a plan several machines share is carried out once.
	var mu sync.Mutex
	covered := map[string]bool{}
	cover := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		covered[what] = true
	}
	carried := 0
	judge := matrixJudge{index: srv.URL, look: look, opts: opts, cover: cover,
		inspect: inspectPath,
		apply: func(t *testing.T, env *pyenv.Env, g gpu.State, p fixplan.Plan) string {
			return applyToCopy(t, env, g, srv.URL, look, runEnv, filepath.Join(t.TempDir(), "copy"), p, opts)
		}}
	t.Run("matrix", func(t *testing.T) {
		for _, s := range matrixSources {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				dir := buildSource(t, py, srv.URL, filepath.Join(t.TempDir(), "env"), s)
				var machines []matrixMachine
				for i, m := range matrixMachines {
					if !(m.oldDriver && !s.oldDrivers || s.firstOnly && i > 0) {
						machines = append(machines, m)
					}
				}
				applied := judge.run(t, dir, machines)
				mu.Lock()
				carried += len(applied)
				mu.Unlock()
			})
		}
	})
	for _, want := range []string{
		finding.CodeTorchCPUBuild + "/error", finding.CodeGPUArchUnsupported + "/error", finding.CodeGPUArchUnsupported + "/warning",
		finding.CodeDriverTooOld + "/error", finding.CodeDriverTooOld + "/warning", finding.CodeTorchFamilyMismatch + "/error",
		finding.CodeTorchInstallBroken + "/error", finding.CodeTorchInstallBroken + "/warning", finding.CodeTorchNonNVIDIA + "/error",
		"no fix/" + finding.CodeGPUArchUnsupported, "no fix/" + finding.CodeTorchCPUBuild, "withheld/" + finding.CodeDriverTooOld,
		"route/pip", "route/uv", "mixed=true", "mixed=false", "upgrade", "fix with warnings",
		"form/install", "form/repair", "form/repair-all",
		"runtime/" + pyenv.ProblemMissingRuntime + "/pip", "runtime/" + pyenv.ProblemMissingRuntime + "/uv", "runtime/" + pyenv.ProblemRuntimeMismatch + "/pip",
	} {
		if !covered[want] {
			t.Errorf("the matrix never covered %s", want)
		}
	}
	t.Logf("%d plans carried out, covering %d cases", carried, len(covered))
}

// matrixJudge checks issue 16's property on one environment.
type matrixJudge struct {
	index string
	look  func(string) (string, error)
	opts  health.Options
	cover func(what string)
	// inspect reads an environment as the rules see it; apply carries out
	// plan p of env on a copy and returns the copy.
	inspect func(t *testing.T, dir string) *pyenv.Env
	apply   func(t *testing.T, env *pyenv.Env, g gpu.State, p fixplan.Plan) string
}

// run judges the environment at dir on each machine in turn: every
// finding a reinstall fixes comes with the command of the plan, which
// carried out clears it and leaves nothing it did not warn of, or with
// no command, when the plan is blocked or would leave it. It returns the
// plans carried out, by command, each once.
func (j matrixJudge) run(t *testing.T, dir string, machines []matrixMachine) map[string]string {
	t.Helper()
	applied := map[string]string{}
	for _, m := range machines {
		env := j.inspect(t, dir)
		for _, f := range health.CheckEnv(env, m.g, j.opts) {
			if !finding.FixedByReinstall(f.Code) {
				continue
			}
			p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: m.g, IndexBase: j.index, LookPath: j.look})
			if err != nil {
				t.Fatalf("%s: %s: NewPlan: %v", m.name, f.Code, err)
			}
			if f.Fix == "" && p.Blocked != "" {
				j.cover("no fix/" + f.Code)
				continue
			}
			if f.Fix != "" && f.Fix != p.Command() {
				t.Fatalf("%s: %s: the finding's fix\n  %s\nis not the plan's command\n  %s", m.name, f.Code, f.Fix, p.Command())
			}
			after, ok := applied[p.Command()]
			if !ok {
				after = j.apply(t, env, m.g, p)
				applied[p.Command()] = after
			}
			still := false
			for _, r := range health.CheckEnv(j.inspect(t, after), m.g, j.opts) {
				switch {
				case r.Code == f.Code && r.Severity.Rank() >= f.Severity.Rank():
					still = true
				case r.Code != f.Code && finding.FixedByReinstall(r.Code) && r.Severity == finding.SeverityError,
					r.Code != f.Code && finding.FixedByReinstall(r.Code) && r.Severity == finding.SeverityWarning && len(p.Warnings) == 0:
					t.Errorf("%s: the plan for %s left %s %s, which it did not warn of: %s", m.name, f.Code, r.Code, r.Severity, r.Message)
				}
			}
			if f.Fix == "" {
				// The command was withheld: rightly, if the plan
				// made for the environment leaves this finding.
				if !still {
					t.Errorf("%s: %s %s (%s) shows no fix, but the plan\n  %s\nclears it", m.name, f.Code, f.Severity, f.Message, p.Command())
				}
				j.cover("withheld/" + f.Code)
				continue
			}
			if still {
				t.Errorf("%s: %s %s (%s) is not cleared by its fix\n  %s", m.name, f.Code, f.Severity, f.Message, f.Fix)
			}
			if len(p.Warnings) > 0 {
				j.cover("fix with warnings")
			}
			if p.Upgrade {
				j.cover("upgrade")
			}
			if len(p.Removes) > 0 {
				j.cover("removal")
			}
			j.cover("route/" + p.Installer)
			j.cover("form/" + form(p.Argv))
			j.cover(f.Code + "/" + string(f.Severity))
			for _, e := range f.Evidence {
				if e.Says == pyenv.ProblemMissingRuntime || e.Says == pyenv.ProblemRuntimeMismatch {
					j.cover("runtime/" + e.Says + "/" + p.Installer)
				}
			}
			j.cover(fmt.Sprintf("mixed=%v", m.mixed))
		}
	}
	return applied
}

// form names a plan's install form by its flags.
func form(argv []string) string {
	forced := slices.Contains(argv, "--force-reinstall") || slices.Contains(argv, "--reinstall")
	switch {
	case forced && slices.Contains(argv, "--no-deps"):
		return "repair"
	case forced:
		return "repair-all"
	}
	return "install"
}

// rulesOptions are the health options the matrix judges with: fix
// commands aimed at the test index, built by the same advice the
// command line injects.
func rulesOptions(index string, look func(string) (string, error)) health.Options {
	return health.Options{Advice: fixplan.Advice{IndexBase: index, LookPath: look}}
}

// applyToCopy carries out plan p of env on a copy of it at dir, the way
// `gpucanary fix` does (fix.Run, verified by the rules), and returns the
// copy.
func applyToCopy(t *testing.T, env *pyenv.Env, g gpu.State, index string, look func(string) (string, error), runEnv []string, dir string, p fixplan.Plan, opts health.Options) string {
	t.Helper()
	if out, err := exec.Command("cp", "-a", env.Path, dir).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", env.Path, err, out)
	}
	cp := inspectPath(t, dir)
	plan, err := fixplan.NewPlan(fixplan.Request{Env: cp, GPU: g, IndexBase: index, LookPath: look})
	if err != nil || plan.Blocked != "" || !slices.Equal(plan.Packages, p.Packages) || plan.Installer != p.Installer || plan.Index != p.Index {
		t.Fatalf("the copy's plan %+v (%v) is not the plan %+v", plan, err, p)
	}
	res, err := fix.Run(context.Background(), plan, cp, fix.RunOptions{Env: runEnv, Check: func(e *pyenv.Env) []finding.Finding { return fix.Reinstallable(opts)(e, g) }})
	if err != nil || !res.Fixed {
		t.Fatalf("carrying out %s: %v; %+v", plan.Command(), err, res)
	}
	return dir
}

// buildSource makes a real venv at dir and installs s into it with real
// pip from the index, with the requirements the wheels name (the NVIDIA
// runtime of a CUDA torch) unless s.noDeps.
func buildSource(t *testing.T, py, index, dir string, s source) string {
	t.Helper()
	wheeltest.NewVenv(t, py, dir)
	for _, in := range s.installs {
		args := []string{"install", "--index-url", index + "/" + in.tag}
		if s.noDeps {
			args = append(args, "--no-deps")
		}
		wheeltest.Pip(t, py, dir, append(args, in.pins...)...)
	}
	site := wheeltest.SitePackages(t, dir)
	if s.uv {
		cfg := filepath.Join(dir, "pyvenv.cfg")
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, cfg, string(b)+"uv = 0.5.11\n")
		infos, _ := filepath.Glob(filepath.Join(site, "*.dist-info", "INSTALLER"))
		for _, f := range infos {
			writeFile(t, f, "uv")
		}
	}
	if s.spoil != nil {
		s.spoil(t, site)
	}
	return dir
}

// matrixIndex serves every build the matrix starts from or a plan may
// install: each release's variants from kb with their companions, and
// the ROCm, XPU, CPU and untagged builds the sources use.
func matrixIndex(t *testing.T) *wheeltest.Index {
	t.Helper()
	idx := wheeltest.NewIndex(t.TempDir())
	add := func(tag string, s wheeltest.Spec) {
		if err := idx.Add(tag, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"1.9.1", "1.13.1", "2.5.1", "2.7.1", "2.8.0", "2.9.1"} {
		rel, _ := kb.ReleaseFor(v)
		tags := rel.Tags
		vision, audio, _ := kb.Companions(v)
		for _, tag := range append(tags, "cpu", "rocm6.2", "xpu") {
			add(tag, wheeltest.Torch(v, tag))
			add(tag, wheeltest.Companion("torchvision", vision, tag))
			add(tag, wheeltest.Companion("torchaudio", audio, tag))
		}
	}
	add("cu121", wheeltest.Companion("torchvision", "0.19.1", "cu121"))
	add("cu124", wheeltest.Spec{Name: "nvidia-cudnn-cu12", Version: "9.5.1.17", Libs: []string{"libcudnn.so.9"}})
	add("cu101", wheeltest.Spec{Name: "torch", Version: "1.4.0", CUDA: "10.1"})
	return idx
}

func inspectPath(t *testing.T, path string) *pyenv.Env {
	t.Helper()
	env, err := pyenv.Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeAll(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}
