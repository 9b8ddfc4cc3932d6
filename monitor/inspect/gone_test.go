package inspect

import (
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestMarkGone: a PID the driver lists that no process has is "not
// running" where the view is the host's, and left as another namespace's
// where it cannot be told.
func TestMarkGone(t *testing.T) {
	m := uint64(8 << 30)
	g := gpu.State{Driver: "550.54.15", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", Processes: []gpu.Process{{PID: 4242, UsedMemoryBytes: &m}, {PID: 100, UsedMemoryBytes: &m}}}}}
	for _, tc := range []struct {
		name  string
		alive func(int) bool
		want  map[int]string
	}{
		{"the host's view", func(pid int) bool { return pid == 100 }, map[int]string{4242: "(not running)", 100: "(not visible here)"}},
		{"another PID namespace", nil, map[int]string{4242: "(not visible here)", 100: "(not visible here)"}},
	} {
		rows := Processes(nil, g, nil, nil, procs.DefaultBusyRule, nil, time.Now())
		MarkGone(rows, tc.alive)
		if len(rows) != 2 {
			t.Fatalf("%s: rows = %+v", tc.name, rows)
		}
		for _, r := range rows {
			if r.Name != tc.want[r.PID] || (r.Name == "(not running)") != (r.Reason == goneReason) {
				t.Errorf("%s: PID %d is %q: %s", tc.name, r.PID, r.Name, r.Reason)
			}
		}
	}
}
