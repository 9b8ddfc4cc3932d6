package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// simOldDriver is a driver of CUDA 11.4: older than every CUDA wheel
// of llama-cpp-python 0.3.4, and than any CUDA 12 torch.
const simOldDriver = `{"driver": "470.82.01", "cuda_driver": "11.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}`

// simRTX5090 is a Blackwell GPU, which no build of torch 2.5 has code for.
const simRTX5090 = `{"driver": "570.86.10", "cuda_driver": "12.8",
 "devices": [{"name": "NVIDIA GeForce RTX 5090", "uuid": "GPU-0000", "compute_capability": "12.0",
              "memory_total_bytes": 34359738368, "processes": []}]}`

// llamaIndex serves llama-cpp-python 0.3.4 as BASE/TAG/, like
// abetlen.github.io/llama-cpp-python/whl: a CPU build under cpu, CUDA
// builds (with llama_cpp/lib/libggml-cuda.so) under cu121 and cu124.
func llamaIndex(t *testing.T) (*wheeltest.Index, string) {
	t.Helper()
	idx := wheeltest.NewIndex(t.TempDir())
	if err := idx.Add("cpu", wheeltest.Llama("0.3.4", "cpu")); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"cu121", "cu124"} {
		if err := idx.Add(tag, wheeltest.Llama("0.3.4", "cpu", "cuda")); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	return idx, srv.URL
}

// TestFixInstallsLlamaCUDAWheel: `fix` of a llama-cpp-python CPU build
// (LLAMA_CPP_CPU_BUILD, an error for check) reinstalls the same release
// from the CUDA wheel index of the CUDA this driver supports (cu124 for
// 12.4, not cu121), served locally, verifies the CUDA backend by reading
// the environment again, journals it, and check is clean after. Before,
// fix said "torch is not installed" here (exit 1, nothing run); with a
// torch beside it, "Nothing to fix" (exit 0).
func TestFixInstallsLlamaCUDAWheel(t *testing.T) {
	fixEnvSetup(t)
	py := wheeltest.Python(t)
	idx, base := llamaIndex(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/cpu", "llama-cpp-python==0.3.4")
	sim := simFile(t, simA100)

	out, _, code := runCLI(t, "--gpu-sim", sim, "check", venv)
	if code != exitFound || !strings.Contains(out, "LLAMA_CPP_CPU_BUILD") {
		t.Fatalf("check before: exit %d\n%s", code, out)
	}
	before := idx.Requests()
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "fix", "--yes", "--llama-index-base", base, venv)
	if code != exitOK {
		t.Fatalf("fix: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"variant:   cu124", "llama-cpp-python==0.3.4", "--force-reinstall --no-deps", base + "/cu124",
		"Fixed: llama-cpp-python 0.3.4 (CUDA 12.4)", "Journal: "} {
		if !strings.Contains(out, want) {
			t.Errorf("fix's output lacks %q:\n%s", want, out)
		}
	}
	if idx.Requests() == before {
		t.Error("nothing was downloaded from the index")
	}
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if l := env.Packages[pyenv.LlamaCppPython]; l == nil || l.Version != "0.3.4" || !slices.Contains(l.Backends, "cuda") {
		t.Fatalf("after fix: %+v", l)
	}
	j := onlyJournal(t)
	if j.Before[pyenv.LlamaCppPython] != "0.3.4" || j.Result == nil || !j.Result.Fixed || !strings.Contains(j.Rollback, "llama-cpp-python==0.3.4") || j.Plan.Package != pyenv.LlamaCppPython {
		t.Errorf("journal: %+v", j)
	}
	if out, _, code := runCLI(t, "--gpu-sim", sim, "check", venv); code != exitOK || strings.Contains(out, "LLAMA_CPP_CPU_BUILD") {
		t.Errorf("check after: exit %d\n%s", code, out)
	}
}

// TestFixLlamaWithoutAWheel: where no CUDA wheel fits (a CUDA 11.4
// driver, older than every wheel of 0.3.4), fix runs nothing, says why,
// gives the build from source with CUDA by hand (the one check shows)
// and exits 1.
func TestFixLlamaWithoutAWheel(t *testing.T) {
	fixEnvSetup(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := writeSpec(venv, pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.4", Backends: []string{"cpu"}}}); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simOldDriver)
	source := `CMAKE_ARGS="-DGGML_CUDA=on" ` + filepath.Join(venv, "bin", "python") + " -m pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python==0.3.4"
	out, _, code := runCLI(t, "--gpu-sim", sim, "fix", "--yes", venv)
	if code != exitFound {
		t.Fatalf("exit %d, want %d\n%s", code, exitFound, out)
	}
	for _, want := range []string{"Not fixed: the driver supports CUDA 11.4, older than the oldest CUDA wheel", "To do it by hand:\n  " + source} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if j, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "gpucanary", "journal", "*")); len(j) != 0 {
		t.Errorf("a repair was recorded: %v", j)
	}
	if out, _, _ := runCLI(t, "--gpu-sim", sim, "check", venv); !strings.Contains(out, "fix: "+source) {
		t.Errorf("check shows another command:\n%s", out)
	}
}

// TestFixNamesWhatItDoesNotRepair: an environment whose torch is right
// but whose llama-cpp-python has lost its libraries (PACKAGE_INSTALL_BROKEN,
// an error) is not "nothing to fix": fix names the finding with its
// command and exits 1. Before, it said "Nothing to fix" and exited 0.
func TestFixNamesWhatItDoesNotRepair(t *testing.T) {
	fixEnvSetup(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := writeSpec(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"},
		Llama: &pyenvtest.Llama{Version: "0.3.4", Backends: []string{"cuda"}}}); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(env.SitePackages, "llama_cpp", "lib")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	out, _, code := runCLI(t, "--gpu-sim", sim, "fix", "--yes", venv)
	if code != exitFound || strings.Contains(out, "Nothing to fix") {
		t.Fatalf("exit %d, want %d and no \"Nothing to fix\"\n%s", code, exitFound, out)
	}
	check, _, _ := runCLI(t, "--gpu-sim", sim, "check", "--json", venv)
	f := findingOf(t, check, finding.CodePackageInstallBroken)
	for _, want := range []string{"PACKAGE_INSTALL_BROKEN: " + f.Message, "fix: " + f.Fix} {
		if f.Fix == "" || !strings.Contains(out, want) {
			t.Errorf("fix's output lacks %q:\n%s", want, out)
		}
	}

	// Healthy, it still says there is nothing to fix.
	healthy := filepath.Join(t.TempDir(), ".venv")
	if err := writeSpec(healthy, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runCLI(t, "--gpu-sim", sim, "fix", "--yes", healthy); code != exitOK || !strings.Contains(out, "Nothing to fix") {
		t.Errorf("healthy: exit %d\n%s", code, out)
	}
}

// findingOf is the one finding with code in check --json's output.
func findingOf(t *testing.T, checkJSON, code string) finding.Finding {
	t.Helper()
	envs := reportsOf(t, checkJSON)
	var got []finding.Finding
	for _, e := range envs {
		for _, f := range e.Findings {
			if f.Code == code {
				got = append(got, f)
			}
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d %s findings in:\n%s", len(got), code, checkJSON)
	}
	return got[0]
}

// reportsOf reads check --json's environments as the windows read them.
func reportsOf(t *testing.T, checkJSON string) []monitor.EnvReport {
	t.Helper()
	var r struct {
		Envs []monitor.EnvReport `json:"envs"`
	}
	if err := json.Unmarshal([]byte(checkJSON), &r); err != nil {
		t.Fatalf("%v:\n%s", err, checkJSON)
	}
	return r.Envs
}

// planCommand is the command fix --dry-run's plan shows: its command
// line, or the one to run by hand of a blocked plan.
func planCommand(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if c, ok := strings.CutPrefix(l, "  command:   "); ok {
			return c
		}
		if l == "To do it by hand:" && i+1 < len(lines) {
			return strings.TrimPrefix(lines[i+1], "  ")
		}
	}
	return ""
}

// TestEveryViewShowsOneFixCommand: for every finding code gpucanary fix
// repairs (finding.RepairedCodes), the command check prints, the one in
// check --json, the one fix --dry-run plans and the one the tray's model
// offers ("Copy fix command") are the same, on environments written to
// disk; uv pip only where uv is found. Before, check printed `uv pip
// install --python …` for a uv venv with no uv on PATH while fix's plan
// used pip, and check's llama-cpp-python command was a build from
// source that fix never ran.
func TestEveryViewShowsOneFixCommand(t *testing.T) {
	fixEnvSetup(t)
	cu124 := &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}
	cpuLlama := &pyenvtest.Llama{Version: "0.3.4", Backends: []string{"cpu"}}
	for _, tc := range []struct {
		name, code, sim string
		spec            pyenvtest.Spec
		uv              bool   // a uv on PATH
		want            string // in the command
	}{
		{name: "pip venv, CPU torch", code: finding.CodeTorchCPUBuild, sim: simA100,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}, want: "-m pip install torch==2.5.1+cu124"},
		{name: "uv venv, no uv on PATH", code: finding.CodeTorchCPUBuild, sim: simA100,
			spec: incidentsSpec("uv-cpu-overwrite"), want: "-m pip --python"},
		{name: "uv venv, uv on PATH", code: finding.CodeTorchCPUBuild, sim: simA100, uv: true,
			spec: incidentsSpec("uv-cpu-overwrite"), want: "uv pip install --python"},
		{name: "driver too old", code: finding.CodeDriverTooOld, sim: simOldDriver,
			spec: pyenvtest.Spec{Torch: cu124}, want: "torch==2.5.1+cu118"},
		{name: "Blackwell", code: finding.CodeGPUArchUnsupported, sim: simRTX5090,
			spec: pyenvtest.Spec{Torch: cu124}, want: "torch==2.7.1+cu128"},
		{name: "torchvision of another release", code: finding.CodeTorchFamilyMismatch, sim: simA100,
			spec: pyenvtest.Spec{Torch: cu124, Vision: &pyenvtest.Companion{Version: "0.19.1+cu124", CUDA: "12.4"}}, want: "torchvision==0.20.1+cu124"},
		{name: "torch half deleted", code: finding.CodeTorchInstallBroken, sim: simA100,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip", Libs: []string{"libtorch_cpu.so"}}}, want: "--force-reinstall --no-deps torch==2.5.1+cu124"},
		{name: "ROCm torch", code: finding.CodeTorchNonNVIDIA, sim: simA100,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+rocm6.2", HIP: "6.2.41133", Installer: "pip"}}, want: "torch==2.5.1+cu124"},
		{name: "llama-cpp-python CPU build", code: finding.CodeLlamaCPPCPUBuild, sim: simA100,
			spec: pyenvtest.Spec{Llama: cpuLlama}, want: "llama-cpp-python==0.3.4 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"},
		{name: "llama-cpp-python CPU build beside a CUDA torch, uv venv without uv", code: finding.CodeLlamaCPPCPUBuild, sim: simA100,
			spec: pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "uv"}, Llama: cpuLlama}, want: "-m pip --python"},
		{name: "llama-cpp-python, no wheel for the driver", code: finding.CodeLlamaCPPCPUBuild, sim: simOldDriver,
			spec: pyenvtest.Spec{Llama: cpuLlama}, want: `CMAKE_ARGS="-DGGML_CUDA=on"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.uv {
				monitortest.UVOnPath(t)
			} else {
				noUVOnPath(t)
			}
			venv := filepath.Join(t.TempDir(), ".venv")
			if err := writeSpec(venv, tc.spec); err != nil {
				t.Fatal(err)
			}
			sim := simFile(t, tc.sim)
			js, _, _ := runCLI(t, "--gpu-sim", sim, "check", "--json", venv)
			cmd := findingOf(t, js, tc.code).Fix
			if cmd == "" || !strings.Contains(cmd, tc.want) || (tc.uv != strings.Contains(cmd, "uv pip")) {
				t.Fatalf("check --json's %s fix %q, want one with %q", tc.code, cmd, tc.want)
			}
			text, _, _ := runCLI(t, "--gpu-sim", sim, "check", venv)
			if !strings.Contains(text, "fix: "+cmd+"\n") {
				t.Errorf("check's text does not show %q:\n%s", cmd, text)
			}
			plan, _, _ := runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", venv)
			if got := planCommand(plan); got != cmd {
				t.Errorf("fix --dry-run plans\n  %q\ncheck shows\n  %q\n%s", got, cmd, plan)
			}
			m := present.Model(monitor.State{Started: true, Envs: reportsOf(t, js)}, time.Now(), false, nil)
			if len(m.Envs) != 1 || m.Envs[0].Fix != cmd {
				t.Errorf("the tray offers %+v, want %q", m.Envs, cmd)
			}
		})
	}
	t.Run("every repaired code has a row", func(t *testing.T) {
		covered := []string{finding.CodeTorchCPUBuild, finding.CodeDriverTooOld, finding.CodeGPUArchUnsupported, finding.CodeTorchFamilyMismatch,
			finding.CodeTorchInstallBroken, finding.CodeTorchNonNVIDIA, finding.CodeLlamaCPPCPUBuild,
			// A warning whose rule proposes no command: which build is
			// installed is not known, so no plan is shown for it.
			finding.CodeTorchBuildUnknown}
		for _, c := range finding.RepairedCodes() {
			if !slices.Contains(covered, c) {
				t.Errorf("%s: no row", c)
			}
		}
	})
}
