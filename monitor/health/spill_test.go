package health

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// wddmCard is an RTX 4090 under WDDM with one process whose shared
// memory is shared and whose GPU has used of its 24 GiB in use.
func wddmCard(used, shared uint64) gpu.Device {
	return gpu.Device{Index: 0, Name: "NVIDIA GeForce RTX 4090", UUID: "GPU-4090", MemoryTotalBytes: 24 << 30, MemoryUsedBytes: used,
		Processes: []gpu.Process{{PID: 5120, Type: "compute", UsedMemoryBytes: p(uint64(23 << 30)), SharedMemoryBytes: p(shared)}}}
}

func TestVRAMSpill(t *testing.T) {
	const step = 500 * time.Millisecond
	const full, roomy = 24<<30 - 200<<20, 18 << 30 // 99 % and 75 %
	o := GPUWatchOptions{SpillWindow: 2 * time.Second}
	tests := []struct {
		name  string
		steps int
		at    func(i int) gpu.State
		want  bool
	}{
		{"full and growing for the window", 6, func(i int) gpu.State { return state(wddmCard(full, 600<<20+uint64(i)*100<<20)) }, true},
		{"growing, not yet for the window", 4, func(i int) gpu.State { return state(wddmCard(full, 600<<20+uint64(i)*100<<20)) }, false},
		{"steady shared memory is not spilling", 8, func(int) gpu.State { return state(wddmCard(full, 2<<30)) }, false},
		{"under 512 MiB: staging buffers", 8, func(i int) gpu.State { return state(wddmCard(full, 100<<20+uint64(i)<<20)) }, false},
		{"the GPU has room: not the fallback", 8, func(i int) gpu.State { return state(wddmCard(roomy, 600<<20+uint64(i)*100<<20)) }, false},
		{"a poll below the threshold starts the run again", 8, func(i int) gpu.State {
			if i == 4 {
				return state(wddmCard(roomy, 600<<20))
			}
			return state(wddmCard(full, 600<<20+uint64(i)*100<<20))
		}, false},
		{"no shared figure (Linux, NVML)", 8, func(int) gpu.State {
			d := wddmCard(full, 0)
			d.Processes[0].SharedMemoryBytes = nil
			return state(d)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, _ := run(NewGPUWatch(o), t0, step, tt.steps, tt.at)
			if !tt.want {
				only(t, all, "", "")
				return
			}
			only(t, all, finding.CodeVRAMSpill, finding.SeverityWarning, "PID 5120 on GPU 0 (NVIDIA GeForce RTX 4090)",
				"growing to 1.1 GiB", "99% full", "Sysmem Fallback Policy", "lower the batch size")
			if all[0].PID != 5120 {
				t.Errorf("PID = %d", all[0].PID)
			}
		})
	}
}

// TestVRAMSpillHoldsThenClears: raised, the finding holds while the job
// stays spilled without growing, and clears when the memory is back on
// the GPU.
func TestVRAMSpillHoldsThenClears(t *testing.T) {
	const full = 24<<30 - 200<<20
	w := NewGPUWatch(GPUWatchOptions{SpillWindow: time.Second})
	at := t0
	obs := func(shared uint64) []finding.Finding {
		all, _ := w.Observe(at, state(wddmCard(full, shared)))
		at = at.Add(500 * time.Millisecond)
		return all
	}
	for _, s := range []uint64{600 << 20, 700 << 20} {
		only(t, obs(s), "", "")
	}
	only(t, obs(800<<20), finding.CodeVRAMSpill, finding.SeverityWarning, "for 1 s")
	only(t, obs(800<<20), finding.CodeVRAMSpill, finding.SeverityWarning)
	only(t, obs(10<<20), "", "")
	// Spilling again is a new run: the window starts over.
	only(t, obs(900<<20), "", "")
}

func TestDriverReset(t *testing.T) {
	w := NewGPUWatch(GPUWatchOptions{XidHold: 10 * time.Second})
	reset := state(wddmCard(1<<30, 0))
	reset.DriverResets = []gpu.DriverReset{{Driver: "nvlddmkm"}}
	quiet := state(wddmCard(1<<30, 0))

	all, fresh := w.Observe(t0, quiet)
	if len(all)+len(fresh) != 0 {
		t.Fatalf("before any reset: %v %v", codes(all), codes(fresh))
	}
	all, fresh = w.Observe(t0.Add(time.Second), reset)
	if len(all) != 1 || len(fresh) != 1 || all[0].Code != finding.CodeDriverReset || all[0].Severity != finding.SeverityError || all[0].Env != "" {
		t.Fatalf("after a reset: all %v fresh %v", codes(all), codes(fresh))
	}
	for _, s := range []string{"nvlddmkm", "4101", "save your work", "power supply", "cooling", "driver"} {
		if !strings.Contains(all[0].Message, s) {
			t.Errorf("message %q does not say %q", all[0].Message, s)
		}
	}
	all, fresh = w.Observe(t0.Add(5*time.Second), quiet)
	if len(all) != 1 || len(fresh) != 0 {
		t.Errorf("within the hold: all %v fresh %v", codes(all), codes(fresh))
	}
	all, fresh = w.Observe(t0.Add(8*time.Second), reset)
	if len(fresh) != 1 || !strings.Contains(all[0].Message, "2 times") {
		t.Errorf("a second reset: fresh %v, message %q", codes(fresh), all[0].Message)
	}
	all, _ = w.Observe(t0.Add(17*time.Second), quiet)
	if len(all) != 1 {
		t.Errorf("the hold runs from the last reset: %v", codes(all))
	}
	all, _ = w.Observe(t0.Add(19*time.Second), quiet)
	if len(all) != 0 {
		t.Errorf("past the hold: %v", codes(all))
	}
}
