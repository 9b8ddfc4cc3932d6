package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
)

// spillSim is a simulated RTX 4090 under WDDM, rewritten every 50ms: its
// memory 99 % full, one process (this test's own PID) whose shared memory
// grows by 10 MiB a write while spilling is on and is 16 MiB off, and
// resets display driver resets so far.
type spillSim struct {
	mu       sync.Mutex
	spilling bool
	shared   uint64
	resets   int
	written  time.Time
}

func (s *spillSim) set(f func(*spillSim)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *spillSim) write(t *testing.T, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spilling {
		s.shared = max(s.shared, 600<<20) + 10<<20
	} else {
		s.shared = 16 << 20
	}
	resets := strings.TrimSuffix(strings.Repeat(`{"driver": "nvlddmkm"}, `, s.resets), ", ")
	data := fmt.Sprintf(`{"driver": "566.36", "cuda_driver": "12.7", "driver_resets": [%s],
 "devices": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-4090", "compute_capability": "8.9", "memory_total_bytes": 25757220864,
  "memory_used_bytes": 25600000000, "utilization_gpu_percent": 40,
  "processes": [{"pid": %d, "used_memory_bytes": null, "shared_memory_bytes": %d}]}]}`, resets, os.Getpid(), s.shared)
	writeScenario(t, path, data, &s.written)
}

// TestWatchSpillAndDriverResetJSON runs `watch --json` on a scenario the
// test rewrites, with short windows: VRAM_SPILL is raised for the process
// whose shared memory grows on a full GPU and cleared when it stops
// spilling; DRIVER_RESET is raised by a new driver_resets entry (the
// machine's, not a GPU's) and cleared after the hold.
func TestWatchSpillAndDriverResetJSON(t *testing.T) {
	sim := &spillSim{}
	w := startSimWatch(t, "refresh = \"100ms\"\nspill_window = \"1s\"\nxid_hold = \"1s\"\n", sim.write)

	sim.set(func(s *spillSim) { s.spilling = true })
	ev := w.wait(t, "FINDING_RAISED", finding.CodeVRAMSpill)
	f := ev["finding"].(map[string]any)
	msg, _ := ev["message"].(string)
	if f["env"] != "gpu:0" || f["pid"] != float64(os.Getpid()) || f["severity"] != "warning" || ev["notify"] != true ||
		!strings.Contains(msg, "Sysmem Fallback Policy") || !strings.Contains(msg, "99% full") {
		t.Errorf("VRAM_SPILL raised: %v", ev)
	}
	sim.set(func(s *spillSim) { s.spilling = false })
	w.wait(t, "FINDING_CLEARED", finding.CodeVRAMSpill)

	sim.set(func(s *spillSim) { s.resets = 1 })
	ev = w.wait(t, "FINDING_RAISED", finding.CodeDriverReset)
	f = ev["finding"].(map[string]any)
	if _, has := f["env"]; has || f["severity"] != "error" || ev["notify"] != true || !strings.Contains(ev["message"].(string), "nvlddmkm") {
		t.Errorf("DRIVER_RESET raised: %v", ev)
	}
	w.wait(t, "FINDING_CLEARED", finding.CodeDriverReset)

	w.stop(t)
	if n := strings.Count(strings.Join(w.seen, "|"), "FINDING_RAISED "+finding.CodeDriverReset); n != 1 {
		t.Errorf("DRIVER_RESET raised %d times for one reset: %v", n, w.seen)
	}
}
