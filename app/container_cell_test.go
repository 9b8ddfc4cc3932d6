package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestProcessCellContainer: the processes window names a process's
// container as ps does: docker's short ID, the pod's name, "-" on the host.
func TestProcessCellContainer(t *testing.T) {
	col := slices.Index(procColumns, "Container")
	id := strings.Repeat("3f", 32)
	for _, tc := range []struct {
		c    *procs.Container
		want string
	}{
		{nil, "-"},
		{&procs.Container{ID: id, Runtime: "docker"}, id[:12]},
		{&procs.Container{PodUID: "6e6e2a8c-1b2c-4d3e-8f90-a1b2c3d4e5f6", Pod: "train-llama", Namespace: "ml"}, "train-llama"},
	} {
		r := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 4242, Container: tc.c}, Verdict: procs.VerdictGPU}}
		if got := cell(r, col); got != tc.want {
			t.Errorf("container %+v: cell = %q, want %q", tc.c, got, tc.want)
		}
	}
}
