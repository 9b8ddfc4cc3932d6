package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCheckJSONAnswersKept: `check --json` keeps each environment's
// answer and gives it back while its files hold, and what it prints is
// what a check that keeps nothing prints, before and after the
// environments, the GPU and the variables the rules read change.
func TestCheckJSONAnswersKept(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	root := t.TempDir()
	paths := incidents(t, root)
	if err := pyenvtest.DateBack(root, time.Hour); err != nil {
		t.Fatal(err)
	}
	simA, simH := simFile(t, simA100), simFile(t, simRTX5090)
	check := func(sim string, kept bool) string {
		t.Helper()
		if !kept {
			t.Setenv(kernelCacheVariable, "off")
			defer os.Unsetenv(kernelCacheVariable)
		}
		out, stderr, code := runCLI(t, append([]string{"--gpu-sim", sim, "check", "--json"}, paths...)...)
		if code != 1 {
			t.Fatalf("exit %d, want 1 (the incidents have errors); stderr:\n%s", code, stderr)
		}
		return out
	}
	same := func(what string, sim string) {
		t.Helper()
		if got, want := check(sim, true), check(sim, false); got != want {
			t.Fatalf("%s: check --json with answers kept differs from one without:\n%s", what, firstDiff(got, want))
		}
	}

	same("first run", simA)
	files, _ := filepath.Glob(filepath.Join(cache, "gpucanary", "answers", "*.answer"))
	if len(files) != len(paths) {
		t.Fatalf("%d answers kept, want one per environment (%d)", len(files), len(paths))
	}
	same("run again", simA)

	// The answer kept is the one given: spoil each answer's report and
	// the check prints the spoiled ones, so a run again reads none.
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		spoiled := strings.Replace(string(data), `"verdict"`, `"VERDICT"`, 1)
		if spoiled == string(data) {
			t.Fatalf("%s holds no report", f)
		}
		os.WriteFile(f, []byte(spoiled), 0o600)
	}
	if out := check(simA, true); strings.Count(out, `"VERDICT"`) != len(paths) {
		t.Fatalf("the answers kept were not the ones given (%d of %d spoiled reports printed)", strings.Count(out, `"VERDICT"`), len(paths))
	}
	for _, f := range files {
		os.Remove(f)
	}
	same("answers removed", simA)

	// Another GPU: other inputs, so no answer kept under the A100 holds.
	same("another GPU", simH)
	same("back to the first GPU", simA)

	// An environment changed: the good one becomes uv's CPU overwrite,
	// its files dated back too, as an install an hour ago.
	good := filepath.Join(root, "good-cu121")
	if err := os.RemoveAll(good); err != nil {
		t.Fatal(err)
	}
	if err := writeSpec(good, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	if err := pyenvtest.DateBack(good, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	same("an environment replaced", simA)
	if out := check(simA, true); !strings.Contains(out, good) || strings.Count(out, "TORCH_CPU_BUILD") < 2 {
		t.Fatalf("the replaced environment's CPU torch is not reported:\n%s", out)
	}

	// A variable the rules read.
	t.Setenv("BNB_CUDA_VERSION", "118")
	same("BNB_CUDA_VERSION set", simA)
}

// simRTX5090 is a Blackwell card (sm_120), which cu121 builds have no
// kernels for: the incidents' findings differ from the A100's.
const simRTX5090 = `{"driver": "570.86.10", "cuda_driver": "12.8",
 "devices": [{"name": "NVIDIA GeForce RTX 5090", "uuid": "GPU-5090", "compute_capability": "12.0",
              "memory_total_bytes": 34190917632, "processes": []}]}`

// firstDiff shows where two outputs part.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n  kept:   " + al[i] + "\n  afresh: " + bl[i]
		}
	}
	return "one output is longer"
}

// TestCheckJSONGuardedNotKept: a guarded environment's report says what
// the guard's record says, which its read does not look at, so it is
// never answered from the store: the record removed by hand, with the
// environment as it was, the next check says it is not guarded.
func TestCheckJSONGuardedNotKept(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "venv")
	if err := writeSpec(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runCLI(t, "guard", venv); code != 0 {
		t.Fatalf("guard: exit %d\n%s\n%s", code, out, stderr)
	}
	if err := pyenvtest.DateBack(venv, time.Hour); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	guarded := func() bool {
		t.Helper()
		out, stderr, _ := runCLI(t, "--gpu-sim", sim, "check", "--json", venv)
		if !strings.Contains(out, `"verdict"`) {
			t.Fatalf("check --json printed no report:\n%s\n%s", out, stderr)
		}
		return strings.Contains(out, `"guarded": true`)
	}
	if !guarded() || !guarded() {
		t.Fatal("not guarded after guard")
	}
	records, _ := filepath.Glob(filepath.Join(state, "gpucanary", "guard", "*"))
	if len(records) != 1 {
		t.Fatalf("guard records: %v, want one", records)
	}
	if err := os.RemoveAll(records[0]); err != nil {
		t.Fatal(err)
	}
	if guarded() {
		t.Fatal("still guarded after its record was removed: the guarded report was kept")
	}
}
