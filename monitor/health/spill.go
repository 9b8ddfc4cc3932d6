package health

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// This file holds the two Windows-only rules of the GPU watch (issue 44):
// VRAM_SPILL, a job whose GPU memory is full spilling into system memory
// through the driver's fallback, and DRIVER_RESET, the display driver
// reset by Windows after it stopped responding (TDR). Both are judged on
// what the snapshot says, so a scenario file drives them on any platform.

// Thresholds of VRAM_SPILL (TRAINING-FACTS.md §5.4).
const (
	// SpillSharedBytes is the shared (system) memory a process must use
	// through the GPU to be spilling: small staging buffers there are
	// normal.
	SpillSharedBytes = 512 << 20
	// SpillFullShare is how full the GPU's own memory must be: the driver
	// falls back on system memory only when it is.
	SpillFullShare = 0.95
)

// spillWatch is one process's run of polls spilling.
type spillWatch struct {
	since       time.Time // the first poll of the run
	firstShared uint64    // its shared memory then
	raised      bool
}

// spillKey names a process on a device across snapshots.
type spillKey struct {
	dev string
	pid int
}

// spills is VRAM_SPILL for the processes of the snapshot: a process
// using more than SpillSharedBytes of shared memory on a device whose own
// memory is SpillFullShare full, at every poll for the spill window, with
// its shared memory grown over it. Once raised, it holds while the
// process still spills (growing or not: a job that stays spilled still
// crawls), and clears when either condition goes.
func (w *GPUWatch) spills(now time.Time, g gpu.State) []finding.Finding {
	seen := map[spillKey]bool{}
	var out []finding.Finding
	for _, d := range g.Devices {
		if d.Lost || d.MemoryTotalBytes == 0 {
			continue
		}
		full := float64(d.MemoryUsedBytes) / float64(d.MemoryTotalBytes)
		for _, p := range d.Processes {
			if p.SharedMemoryBytes == nil || *p.SharedMemoryBytes <= SpillSharedBytes || full < SpillFullShare {
				continue
			}
			k := spillKey{deviceKey(d), p.PID}
			seen[k] = true
			sw := w.spill[k]
			if sw == nil {
				sw = &spillWatch{since: now, firstShared: *p.SharedMemoryBytes}
				w.spill[k] = sw
			}
			lasted := now.Sub(sw.since)
			if !sw.raised && (lasted < w.o.SpillWindow || *p.SharedMemoryBytes <= sw.firstShared) {
				continue
			}
			sw.raised = true
			out = append(out, spillFinding(d, p, full, lasted))
		}
	}
	for _, k := range slices.Collect(maps.Keys(w.spill)) {
		if !seen[k] {
			delete(w.spill, k)
		}
	}
	return out
}

func spillFinding(d gpu.Device, p gpu.Process, full float64, lasted time.Duration) finding.Finding {
	msg := fmt.Sprintf("PID %d on %s has spilled into system memory for %s, growing to %s, with the GPU's own memory %d%% full: "+
		"training is using system memory through the driver's fallback and will run many times slower; lower the batch size, "+
		"or turn off 'CUDA - Sysmem Fallback Policy' in the NVIDIA Control Panel to fail fast instead.",
		p.PID, gpuLabel(d), seconds(lasted.Round(100*time.Millisecond)), gib(*p.SharedMemoryBytes), int(math.Floor(full*100)))
	return finding.Finding{Code: finding.CodeVRAMSpill, Severity: finding.SeverityWarning, Env: gpuEnv(d.Index), PID: p.PID, Message: msg}
}

// gib is "1.5 GiB".
func gib(b uint64) string {
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// heldReset is DRIVER_RESET while it is held: how many resets, and until
// when it stays raised.
type heldReset struct {
	count   int
	drivers []string
	until   time.Time
}

// driverReset notes the resets of the snapshot and returns DRIVER_RESET
// while the last is within the hold (the Xid hold: a reset is an event,
// as an Xid is), fresh when the snapshot brought one. A reset does not say
// which GPU, so the finding is the machine's (no Env).
func (w *GPUWatch) driverReset(now time.Time, g gpu.State) (f finding.Finding, held, fresh bool) {
	if len(g.DriverResets) > 0 {
		if w.reset == nil {
			w.reset = &heldReset{}
		}
		w.reset.count += len(g.DriverResets)
		for _, r := range g.DriverResets {
			if !slices.Contains(w.reset.drivers, r.Driver) {
				w.reset.drivers = append(w.reset.drivers, r.Driver)
			}
		}
		w.reset.until = now.Add(w.o.XidHold)
		fresh = true
	}
	if w.reset == nil {
		return finding.Finding{}, false, false
	}
	if now.After(w.reset.until) {
		w.reset = nil
		return finding.Finding{}, false, false
	}
	times := "stopped responding and Windows reset it"
	if w.reset.count > 1 {
		times = fmt.Sprintf("stopped responding and Windows reset it %d times in a row", w.reset.count)
	}
	msg := fmt.Sprintf("The display driver (%s) %s (a TDR, System log Display event 4101). "+
		"CUDA work running at that moment is lost, so your running jobs have most likely died with \"the launch timed out and was terminated\": save your work and check them. "+
		"If it happens again, check the GPU's power supply and cables and its cooling, and update or cleanly reinstall the NVIDIA driver.",
		strings.Join(w.reset.drivers, ", "), times)
	return finding.Finding{Code: finding.CodeDriverReset, Severity: finding.SeverityError, Message: msg}, true, fresh
}
