package tray

import (
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
)

// TestKeepThisCUDABuild: an environment with a CUDA torch offers "Keep
// this CUDA build…", which asks the windows process to set the guard; one
// with a CPU torch does not.
func TestKeepThisCUDABuild(t *testing.T) {
	h := start(t, presenttest.A100, func(d *Deps) { d.CanRepair = true })
	if sub := labels(h.item("✗ llm").Children); slices.Contains(sub, LabelKeep) {
		t.Error("a CPU torch offers to keep its build")
	}
	h.click("✓ good", LabelKeep)
	want := []link.Request{{Keep: h.paths[0]}}
	if !slices.Equal(h.wins.requests, want) {
		t.Errorf("requests %+v\nwant     %+v", h.wins.requests, want)
	}
}
