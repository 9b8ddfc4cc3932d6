package present

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestSummarySaysWSL: under WSL2 the tray's status says so, since the
// process list is thinner there.
func TestSummarySaysWSL(t *testing.T) {
	g := gpu.State{Driver: "566.36", WSL: true, Devices: []gpu.Device{{Name: "NVIDIA GeForce RTX 4090"}}}
	if got := Summary(monitor.State{GPU: g}); !strings.HasPrefix(got, "1 GPU (WSL)") {
		t.Errorf("Summary = %q", got)
	}
	g.WSL = false
	if got := Summary(monitor.State{GPU: g}); strings.Contains(got, "WSL") {
		t.Errorf("Summary = %q", got)
	}
}
