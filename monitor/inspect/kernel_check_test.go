package inspect

import (
	"context"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// TestCheckKernelGone: a kernel whose interpreter does not exist
// (envsearch.Found.Missing) is reported, not read and not dropped: a warning
// on where its environment was, with nothing known of its packages.
func TestCheckKernelGone(t *testing.T) {
	f := envsearch.Found{Path: "/gone/envs/gpu", Via: "jupyter", From: "/home/me/.local/share/jupyter/kernels/gpu/kernel.json", Missing: "/gone/envs/gpu/bin/python"}
	res := Check(context.Background(), nil, gpu.State{}, []envsearch.Found{f}, health.Options{})
	if len(res.Envs) != 1 {
		t.Fatalf("%d reports, want 1", len(res.Envs))
	}
	rep := res.Envs[0]
	if rep.Verdict != monitor.VerdictWarning || len(rep.Findings) != 1 || rep.Findings[0].Code != finding.CodeEnvInterpreterMissing ||
		rep.From != f.From || rep.Via != "jupyter" || rep.Packages != nil {
		t.Errorf("report %+v, findings %+v", rep, rep.Findings)
	}
}
