package health

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
)

// OrphanMargin is how much more a GPU's used memory may be than its
// processes hold before that is GPU_MEMORY_ORPHANED: the driver keeps
// memory of its own (hundreds of MiB on a data-center GPU, more with ECC
// and many contexts), so the margin is 1 GiB or a twentieth of the
// memory, whichever is more.
func OrphanMargin(total uint64) uint64 { return max(1<<30, total/20) }

// CheckGPUMemory raises GPU_MEMORY_ORPHANED once per GPU that holds
// memory no live process accounts for. alive reports whether a PID NVML
// lists runs on this machine; nil when this view cannot see the driver's
// PIDs (a container without the host's PID namespace), and then nothing
// is judged: there a PID missing from /proc, and memory NVML names no
// process for, are other containers', not orphans. Under WSL2 and for a
// MIG-partitioned or sleeping GPU nothing is judged either: NVML names no
// process's memory there.
func CheckGPUMemory(g gpu.State, alive func(pid int) bool) []finding.Finding {
	if alive == nil || g.WSL {
		return nil
	}
	var out []finding.Finding
	for _, d := range g.Devices {
		if d.Asleep || d.MIGEnabled || d.Error != "" {
			continue
		}
		if f, ok := orphanedOn(d, alive); ok {
			out = append(out, f)
		}
	}
	return out
}

// orphanedOn judges one device.
func orphanedOn(d gpu.Device, alive func(int) bool) (finding.Finding, bool) {
	var gone []int
	var goneMem, listed uint64
	known := true
	seen := map[int]bool{}
	// A process in two of NVML's lists (compute and graphics) is listed
	// with the same memory in each: it is counted once.
	for _, p := range d.Processes {
		if seen[p.PID] {
			continue
		}
		seen[p.PID] = true
		if p.UsedMemoryBytes == nil {
			known = false
		} else {
			listed += *p.UsedMemoryBytes
		}
		if p.PID <= 0 || alive(p.PID) {
			continue
		}
		gone = append(gone, p.PID)
		if p.UsedMemoryBytes != nil {
			goneMem += *p.UsedMemoryBytes
		}
	}
	gpuName := fmt.Sprintf("GPU %d", d.Index)
	if d.Name != "" {
		gpuName += " (" + d.Name + ")"
	}
	f := finding.Finding{Code: finding.CodeGPUMemoryOrphaned, Severity: finding.SeverityWarning, Env: "gpu:" + strconv.Itoa(d.Index)}
	after := fmt.Sprintf("It stays taken until the driver frees it, which may take a GPU reset (nvidia-smi --gpu-reset -i %d, with nothing else on the GPU) or a reboot.", d.Index)
	switch {
	case len(gone) > 0:
		slices.Sort(gone)
		pids := make([]string, len(gone))
		for i, pid := range gone {
			pids[i] = strconv.Itoa(pid)
		}
		amount := "memory"
		if goneMem > 0 {
			amount = human.Bytes(goneMem)
		}
		which := "PID " + pids[0] + ", which is not running"
		if len(pids) > 1 {
			which = "PIDs " + strings.Join(pids, ", ") + ", which are not running"
		}
		f.Message = fmt.Sprintf("%s: %s is held by no live process: the driver lists %s (exited or killed while the driver still held their memory). %s",
			gpuName, amount, which, after)
		return f, true
	case known && d.MemoryUsedBytes > listed && d.MemoryUsedBytes-listed > OrphanMargin(d.MemoryTotalBytes):
		f.Message = fmt.Sprintf("%s: %s of its %s in use is held by no process the driver lists (beyond a margin of %s for the driver's own). %s",
			gpuName, human.Bytes(d.MemoryUsedBytes-listed), human.Bytes(d.MemoryUsedBytes), human.Bytes(OrphanMargin(d.MemoryTotalBytes)), after)
		return f, true
	}
	return finding.Finding{}, false
}
