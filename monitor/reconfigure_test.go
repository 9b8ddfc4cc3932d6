package monitor

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
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
	e := startEngine(t, Options{Discover: pyenv.DiscoverOptions{Roots: []string{rootA}, Getenv: noEnv}})
	e.wait(5*time.Second, kind(KindEnvAdded, inA))
	e.m.Add(byHand)
	e.wait(5*time.Second, kind(KindEnvAdded, byHand))

	mirror := "https://mirror.example.org/pytorch"
	e.m.Reconfigure(Settings{
		Discover: pyenv.DiscoverOptions{Roots: []string{rootB}, Getenv: noEnv},
		Health:   health.Options{Reinstall: fix.Advice{IndexBase: mirror}.Reinstall, Getenv: noEnv},
		Interval: time.Second,
		Kinds:    []string{KindCUDAWheelReplaced},
	})
	e.wait(5*time.Second, kind(KindEnvAdded, inB))
	e.wait(5*time.Second, kind(KindEnvRemoved, inA))

	deadline := time.Now().Add(5 * time.Second)
	for {
		got := map[string]string{}
		for _, r := range e.m.State().Envs {
			for _, f := range r.Findings {
				if f.Code == "TORCH_CPU_BUILD" {
					got[r.Path] = f.Fix
				}
			}
		}
		_, stillA := got[inA]
		if len(got) == 2 && !stillA && strings.Contains(got[inB], mirror) && strings.Contains(got[byHand], mirror) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Reconfigure, CPU-build fixes by env = %v; want %s and %s, both from %s\n%s", got, inB, byHand, mirror, e.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e.m.Policy().Allows(KindTorchRemoved) {
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
	opts := func(timeout time.Duration, roots ...string) pyenv.DiscoverOptions {
		return pyenv.DiscoverOptions{Roots: roots, Home: home, Cwd: cwd, Getenv: func(string) string { return "" }, Timeout: timeout}
	}
	e := startEngine(t, Options{Discover: opts(0, rootA, rootB)})
	e.wait(5*time.Second, kind(KindEnvAdded, inA))
	e.wait(5*time.Second, kind(KindEnvAdded, inB))

	if err := e.m.Reconfigure(Settings{Discover: opts(time.Nanosecond, rootB)}); err != nil {
		t.Fatal(err)
	}
	// Requests run in order: once byHand is added, the reconfiguration
	// and its cut-short search are done.
	if err := e.m.Add(byHand); err != nil {
		t.Fatal(err)
	}
	e.wait(5*time.Second, kind(KindEnvAdded, byHand))
	e.wait(5*time.Second, kind(KindEnvRemoved, inA))
	if n := e.count(kind(KindEnvRemoved, inB)); n != 0 {
		t.Fatalf("a search cut short by its budget dropped %s, under a root still searched\n%s", inB, e.dump())
	}
	if !slices.ContainsFunc(e.m.State().Envs, func(r EnvReport) bool { return r.Path == inB }) {
		t.Fatalf("%s left the state\n%s", inB, e.dump())
	}

	if err := e.m.Reconfigure(Settings{Discover: opts(0)}); err != nil { // rootB removed, searched in full
		t.Fatal(err)
	}
	e.wait(5*time.Second, kind(KindEnvRemoved, inB))
	for _, p := range []string{inA, byHand} {
		if n := e.count(kind(KindEnvRemoved, p)); p == byHand && n != 0 || p == inA && n != 1 {
			t.Errorf("%s removed %d times\n%s", p, n, e.dump())
		}
	}
}
