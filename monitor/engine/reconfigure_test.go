package engine_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestReconfigureAppliesAtOnce changes the discovery roots and the index
// mirror of a running engine: the new root's environment is found, the
// old root's is dropped, one added by hand stays, and fix commands name
// the mirror, all without a restart.
func TestReconfigureAppliesAtOnce(t *testing.T) {
	rootA, rootB, other := t.TempDir(), t.TempDir(), t.TempDir()
	cpu := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1"}}
	inA, inB, byHand := filepath.Join(rootA, "a", ".venv"), filepath.Join(rootB, "b", ".venv"), filepath.Join(other, "mine")
	for _, p := range []string{inA, inB, byHand} {
		if err := pyenvtest.Write(p, cpu); err != nil {
			t.Fatal(err)
		}
	}
	noEnv := func(string) string { return "" }
	emptyHome := t.TempDir()
	e := monitortest.Start(t, engine.Options{Discover: envsearch.Options{Roots: []string{rootA}, Home: emptyHome, System: []string{}, Getenv: noEnv}})
	e.Wait(5*time.Second, kind(monitor.KindEnvAdded, inA))
	if err := e.M.Add(byHand); err != nil {
		t.Fatal(err)
	}
	mirror := "https://mirror.example.org/pytorch"
	err := e.M.Reconfigure(engine.Settings{
		Discover: envsearch.Options{Roots: []string{rootB}, Home: emptyHome, System: []string{}, Getenv: noEnv},
		Health:   health.Options{Advice: fixplan.Advice{IndexBase: mirror}, Getenv: noEnv},
		Interval: time.Second,
		Kinds:    []monitor.Kind{monitor.KindCUDAWheelReplaced},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Requests run in order, each to its end: once Sync returns, the
	// reconfiguration and the search it started are done.
	if err := engine.Sync(e.M); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range e.M.State().Envs {
		for _, f := range r.Findings {
			if f.Code == finding.CodeTorchCPUBuild {
				got[r.Path] = f.Fix
			}
		}
	}
	if _, stillA := got[inA]; len(got) != 2 || stillA || !strings.Contains(got[inB], mirror) || !strings.Contains(got[byHand], mirror) {
		t.Fatalf("after Reconfigure, CPU-build fixes by env = %v; want %s and %s, both from %s\n%s", got, inB, byHand, mirror, e.Dump())
	}
	e.Wait(5*time.Second, kind(monitor.KindEnvAdded, byHand))
	e.Wait(5*time.Second, kind(monitor.KindEnvAdded, inB))
	e.Wait(5*time.Second, kind(monitor.KindEnvRemoved, inA))
	if e.M.Policy().Allows(monitor.KindTorchRemoved) || !e.M.Policy().Allows(monitor.KindCUDAWheelReplaced) {
		t.Error("notification kinds were not applied")
	}
}

// TestCutShortDiscovery: a search cut short by its time budget may have
// missed environments under the places still searched, so it keeps them;
// those under a removed root go at once all the same, unless they are
// also under a place still searched (here rootB, inside the removed rootA).
func TestCutShortDiscovery(t *testing.T) {
	rootA, home, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	rootB := filepath.Join(rootA, "kept")
	cpu := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1"}}
	inA, inB, byHand := filepath.Join(rootA, "a", ".venv"), filepath.Join(rootB, "b", ".venv"), filepath.Join(t.TempDir(), "mine")
	for _, p := range []string{inA, inB, byHand} {
		if err := pyenvtest.Write(p, cpu); err != nil {
			t.Fatal(err)
		}
	}
	opts := func(timeout time.Duration, roots ...string) envsearch.Options {
		return envsearch.Options{Roots: roots, Home: home, Cwd: cwd, System: []string{}, Getenv: func(string) string { return "" }, Timeout: timeout}
	}
	e := monitortest.Start(t, engine.Options{Discover: opts(0, rootA, rootB)})
	e.Wait(5*time.Second, kind(monitor.KindEnvAdded, inA))
	e.Wait(5*time.Second, kind(monitor.KindEnvAdded, inB))
	if err := e.M.Add(byHand); err != nil {
		t.Fatal(err)
	}

	if err := e.M.Reconfigure(engine.Settings{Discover: opts(time.Nanosecond, rootB)}); err != nil {
		t.Fatal(err)
	}
	if err := engine.Sync(e.M); err != nil {
		t.Fatal(err)
	}
	e.Wait(5*time.Second, kind(monitor.KindEnvRemoved, inA))
	if n := e.Count(kind(monitor.KindEnvRemoved, inB)); n != 0 {
		t.Fatalf("a search cut short by its budget dropped %s, under a root still searched\n%s", inB, e.Dump())
	}
	if got := envPaths(e.M.State()); !slices.Contains(got, inB) || slices.Contains(got, inA) {
		t.Fatalf("state after a cut-short search = %v\n%s", got, e.Dump())
	}

	if err := e.M.Reconfigure(engine.Settings{Discover: opts(0)}); err != nil { // rootB removed, searched in full
		t.Fatal(err)
	}
	if err := engine.Sync(e.M); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	for _, p := range []string{inA, inB, byHand} {
		want := 1
		if p == byHand {
			want = 0
		}
		if n := e.Count(kind(monitor.KindEnvRemoved, p)); n != want {
			t.Errorf("%s removed %d times, want %d\n%s", p, n, want, e.Dump())
		}
	}
}
