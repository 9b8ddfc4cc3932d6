package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

const noGPU = `{"devices": []}`

// simGPU is a simulated GPU whose scenario the test changes while the
// engine runs.
type simGPU struct {
	t    *testing.T
	path string
	gpu.Backend
}

func newSimGPU(t *testing.T, scenario string) *simGPU {
	s := &simGPU{t: t, path: filepath.Join(t.TempDir(), "gpu.json")}
	s.set(scenario)
	s.Backend = gpu.Open(gpu.Options{SimFile: s.path})
	t.Cleanup(func() { s.Close() })
	return s
}

// set replaces the scenario; the new file's time is in the future, so the
// backend sees it changed however coarse the file system's clock.
func (s *simGPU) set(scenario string) {
	s.t.Helper()
	if err := os.WriteFile(s.path, []byte(scenario), 0o644); err != nil {
		s.t.Fatal(err)
	}
	future := time.Now().Add(time.Duration(len(scenario)) * time.Second)
	if err := os.Chtimes(s.path, future, future); err != nil {
		s.t.Fatal(err)
	}
}

// cpuBuild matches TORCH_CPU_BUILD being raised with severity sev.
func cpuBuild(sev finding.Severity) func(monitor.Event) bool {
	return func(e monitor.Event) bool {
		return e.Kind == monitor.KindFindingRaised && e.Finding != nil && e.Finding.Code == finding.CodeTorchCPUBuild && e.Finding.Severity == sev
	}
}

// latestAbout is the newest event of the history about env's finding code.
func latestAbout(t *testing.T, st *store.Store, env, code string) monitor.Event {
	t.Helper()
	hist, _, err := store.History[monitor.Event](st, store.HistoryLimit)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist { // newest first
		if e.Env == env && e.Finding != nil && e.Finding.Code == code {
			return e
		}
	}
	t.Fatalf("the history has nothing about %s in %s", code, env)
	return monitor.Event{}
}

// TestGPUDependentFindingsFollowTheGPU is issue 16 point 6: a finding that
// depends on the GPU is said again when the GPU changes its verdict, while
// the engine runs and across a restart, so the newest word of the history
// about an environment is never "no NVIDIA GPU is present" once one is.
func TestGPUDependentFindingsFollowTheGPU(t *testing.T) {
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	st := store.Open(t.TempDir())
	sim := newSimGPU(t, noGPU)
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	opts := engine.Options{Paths: []string{venv}, Store: st, GPU: sim, Clock: clock, Interval: every}

	e := monitortest.Start(t, opts)
	e.Wait(5*time.Second, cpuBuild(finding.SeverityInfo))

	// A GPU appears: the CPU build is now an error, with its fix.
	sim.set(monitortest.A100)
	clock.Advance(every)
	ev := e.Wait(5*time.Second, cpuBuild(finding.SeverityError))
	if !strings.Contains(ev.Message, "but this machine has an NVIDIA A100") || !strings.Contains(ev.Fix, "torch==2.5.1+cu124") {
		t.Errorf("raised again as %q, fix %q", ev.Message, ev.Fix)
	}
	// It goes: fine here again.
	sim.set(noGPU)
	clock.Advance(every)
	e.Wait(5*time.Second, func(later monitor.Event) bool {
		return cpuBuild(finding.SeverityInfo)(later) && later.Time.After(ev.Time)
	})
	e.Stop()
	if got := latestAbout(t, st, venv, finding.CodeTorchCPUBuild); got.Finding.Severity != finding.SeverityInfo {
		t.Fatalf("the history's latest word without a GPU: %q", got.Message)
	}

	// GPU Canary restarts with the GPU there.
	sim.set(monitortest.A100)
	second := monitortest.Start(t, opts)
	second.Wait(5*time.Second, cpuBuild(finding.SeverityError))
	second.Stop()
	if got := latestAbout(t, st, venv, finding.CodeTorchCPUBuild); strings.Contains(got.Message, "no NVIDIA GPU is present") || got.Finding.Severity != finding.SeverityError {
		t.Errorf("after a restart with a GPU, the history's latest word is %s: %q", got.Finding.Severity, got.Message)
	}

	// Nothing changed since: nothing is raised again.
	third := monitortest.Start(t, opts)
	third.Stop()
	if n := third.Count(cpuBuild(finding.SeverityError)) + third.Count(cpuBuild(finding.SeverityInfo)); n != 0 {
		t.Errorf("raised again with nothing changed:\n%s", third.Dump())
	}
}

// TestRestartFromAnOlderStateFile: a state file of an earlier version
// remembers only the keys of its findings; what they said comes from the
// history, so a GPU that appeared meanwhile is still noticed.
func TestRestartFromAnOlderStateFile(t *testing.T) {
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sim := newSimGPU(t, noGPU)
	opts := engine.Options{Paths: []string{venv}, Store: store.Open(dir), GPU: sim}
	first := monitortest.Start(t, opts)
	first.Wait(5*time.Second, cpuBuild(finding.SeverityInfo))
	first.Stop()

	// Keep only what an earlier version wrote: the keys.
	path := filepath.Join(dir, "state.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	// An earlier version wrote the state itself, with no checksum.
	state := file["state"].(map[string]any)
	state["format"] = "gpucanary-state/1"
	rec := state["envs"].(map[string]any)[venv].(map[string]any)
	if _, ok := rec["told"]; !ok {
		t.Fatalf("the state does not remember what was told: %s", raw)
	}
	delete(rec, "told")
	raw, _ = json.Marshal(state)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	sim.set(monitortest.A100)
	opts.Store = store.Open(dir)
	second := monitortest.Start(t, opts)
	second.Wait(5*time.Second, cpuBuild(finding.SeverityError))
}

// TestAWakingGPUIsJudged: an asleep GPU whose name says nothing of its
// architecture cannot be judged; when it wakes and tells its compute
// capability, the environments are judged against it, although no GPU
// came or went.
func TestAWakingGPUIsJudged(t *testing.T) {
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	const asleep = `{"driver": "570.86.10", "cuda_driver": "12.8", "devices": [{"name": "NVIDIA Graphics Device", "uuid": "GPU-1", "asleep": true}]}`
	const awake = `{"driver": "570.86.10", "cuda_driver": "12.8", "devices": [{"name": "NVIDIA Graphics Device", "uuid": "GPU-1", "compute_capability": "12.0"}]}`
	sim := newSimGPU(t, asleep)
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: sim, Clock: clock, Interval: every})
	if n := e.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeGPUArchUnsupported)); n != 0 {
		t.Fatalf("judged against a GPU whose architecture is not known:\n%s", e.Dump())
	}
	sim.set(awake)
	clock.Advance(every)
	ev := e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeGPUArchUnsupported))
	if !strings.Contains(ev.Message, "sm_120") || !strings.Contains(ev.Fix, "torch==2.7.1+cu128") {
		t.Errorf("message %q, fix %q", ev.Message, ev.Fix)
	}
}

// TestGPUChangeKeepsUVFindings: evaluating an environment again for a new
// GPU keeps what does not depend on the GPU (its uv project's risk), so
// the change does not clear it and raise it again.
func TestGPUChangeKeepsUVFindings(t *testing.T) {
	proj := t.TempDir()
	pyproject := "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"torch>=2.0\"]\n\n[[tool.uv.index]]\nname = \"cpu\"\nurl = \"https://download.pytorch.org/whl/cpu\"\n\n[tool.uv.sources]\ntorch = { index = \"cpu\" }\n"
	if err := os.WriteFile(filepath.Join(proj, "pyproject.toml"), []byte(pyproject), 0o644); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(proj, ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	sim := newSimGPU(t, monitortest.A100)
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: sim, Clock: clock, Interval: every})
	e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeUVWillReplaceTorch))
	sim.set(noGPU)
	clock.Advance(every)
	e.Wait(5*time.Second, kind(monitor.KindGPUStateChanged, ""))
	e.Stop()
	if n := e.Count(monitortest.Finding(monitor.KindFindingCleared, finding.CodeUVWillReplaceTorch)); n != 0 {
		t.Errorf("a GPU change cleared the uv project's finding:\n%s", e.Dump())
	}
}

// TestGPUChangeRejudgesUVLock: whether the torch a uv.lock installs runs
// here depends on the GPU, so a new GPU judges it again from what was
// read of the project. PyPI's torch 2.7.1 (cu126) is no worse than the
// installed 2.7.1+cu128 on an A100 with a CUDA 12.4 driver (both run
// through minor-version compatibility); on an RTX 5090 it has no kernels,
// and the next `uv run` would break the GPU: an error, raised on the
// change and cleared when the A100 is back.
func TestGPUChangeRejudgesUVLock(t *testing.T) {
	proj := t.TempDir()
	files := map[string]string{
		"pyproject.toml": "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"torch>=2.7\"]\n",
		"uv.lock":        "version = 1\n\n[[package]]\nname = \"torch\"\nversion = \"2.7.1\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	venv := filepath.Join(proj, ".venv")
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.7.1+cu128", CUDA: "12.8", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	const rtx5090 = `{"driver": "570.86.10", "cuda_driver": "12.8", "devices": [{"name": "NVIDIA GeForce RTX 5090", "uuid": "GPU-1", "compute_capability": "12.0"}]}`
	sim := newSimGPU(t, monitortest.A100)
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: sim, Clock: clock, Interval: every})
	if n := e.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeUVWillReplaceTorch)); n != 0 {
		t.Fatalf("a lock no worse than the installed torch:\n%s", e.Dump())
	}
	sim.set(rtx5090)
	clock.Advance(every)
	ev := e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeUVWillReplaceTorch))
	if !strings.Contains(ev.Message, "cu126 has no code for NVIDIA GeForce RTX 5090 (sm_120)") || ev.Fix != "gpucanary fix --pin-index "+venv ||
		ev.Finding == nil || ev.Finding.Severity != finding.SeverityError {
		t.Errorf("message %q, fix %q, finding %+v", ev.Message, ev.Fix, ev.Finding)
	}
	sim.set(monitortest.A100)
	clock.Advance(every)
	e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingCleared, finding.CodeUVWillReplaceTorch))
}
