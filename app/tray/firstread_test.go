package tray

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// The first read's findings are told even when the engine published them
// before the tray's loop began (a fast disk, a tray host slow to come up):
// the caller subscribes before it starts the engine and hands the
// subscription to the tray, as runTray does.
func TestFirstReadIsTold(t *testing.T) {
	env := filepath.Join(t.TempDir(), "llm", ".venv")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu"}}); err != nil {
		t.Fatal(err)
	}
	m := engine.New(engine.Options{Paths: []string{env}, GPU: monitortest.SimGPU(t, presenttest.A100),
		Interval: 2 * time.Second, Rediscover: -1})
	events, unsubscribe := m.Subscribe()
	t.Cleanup(unsubscribe)
	monitortest.Run(t, m) // returns once the first read is published, before the loop starts
	h := start(t, presenttest.A100, func(d *Deps) { d.Monitor, d.Events = m, events })
	h.waitFor("the first read's CPU build to be told", func() bool {
		for _, n := range h.notifications() {
			if strings.Contains(n, "llm/.venv") && strings.Contains(n, "torch is a CPU-only build") {
				return true
			}
		}
		return false
	})
}
