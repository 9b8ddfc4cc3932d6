//go:build !windows

package engine_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestAFIFOHoldsNothing: `gpucanary watch ENV OTHER` where ENV's
// torch/version.py is a FIFO (issue 15): the engine starts, reports the
// FIFO, still publishes OTHER's overwrite, and stops when asked.
func TestAFIFOHoldsNothing(t *testing.T) {
	f := monitortest.NewTorches(t)
	dir := t.TempDir()
	trap := f.Venv(t, filepath.Join(dir, "trap", ".venv"))
	other := f.Venv(t, filepath.Join(dir, "other", ".venv"))
	version := filepath.Join(wheeltest.SitePackages(t, trap), "torch", "version.py")
	if err := syscall.Unlink(version); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(version, 0o644); err != nil {
		t.Fatal(err)
	}
	e := monitortest.Start(t, engine.Options{Paths: []string{trap, other}})
	f.Install(t, other, "2.5.1+cpu")
	e.Wait(30*time.Second, monitortest.Kind(monitor.KindCUDAWheelReplaced, other))
	stopped := make(chan struct{})
	go func() { e.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("the engine did not stop")
	}
}
