package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
)

// TestNamedEnvironmentsOnly: `watch envs/cpu` watches envs/cpu, not the
// folder it is in. Its folder is watched to see it deleted and created
// again, but an environment someone creates beside it is not added (a
// shared folder would let anyone add series to the agent's metrics)
// (issue 32, L14).
func TestNamedEnvironmentsOnly(t *testing.T) {
	f := monitortest.NewTorches(t)
	envs := t.TempDir()
	named := f.Venv(t, filepath.Join(envs, "cpu"))
	e := monitortest.Start(t, engine.Options{Paths: []string{named}})

	beside := f.Venv(t, filepath.Join(envs, "beside"))
	// The named one deleted and created again: it is watched again. Its
	// folder's events come after the one beside it, so once it is back,
	// the one beside it has been considered.
	if err := os.RemoveAll(named); err != nil {
		t.Fatal(err)
	}
	e.Wait(10*time.Second, kind(monitor.KindEnvRemoved, named))
	f.Venv(t, named)
	e.Wait(10*time.Second, kind(monitor.KindEnvAdded, named))
	e.Stop()
	if n := e.Count(kind(monitor.KindEnvAdded, beside)); n != 0 {
		t.Errorf("an environment created beside the named one was added:\n%s", e.Dump())
	}
	for _, r := range e.M.State().Envs {
		if r.Path != named {
			t.Errorf("watched %s, which was not named", r.Path)
		}
	}
}
