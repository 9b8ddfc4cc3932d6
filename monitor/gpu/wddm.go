// This file fills in the per-process GPU use that NVML leaves out under
// WDDM, the Windows display driver model every GeForce runs in: NVML lists
// the processes but reports their memory as not available, because Windows
// manages GPU memory itself. Windows accounts it per process in the
// performance counters Task Manager shows ("GPU Process Memory",
// "GPU Engine"); a platform that can read them gives the backend a
// processCounters. Matching, summing and parsing happen here, so they are
// tested on every platform; only the reading is Windows code.

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// processCounters reads the per-process GPU use an operating system
// accounts outside NVML.
type processCounters interface {
	// read returns each process's use of each GPU adapter. An error that
	// wraps errNoCounters means this system does not have the counters;
	// they are not asked for again.
	read(ctx context.Context) ([]processUse, error)
	close()
}

// errNoCounters says the per-process GPU counters are not there.
var errNoCounters = errors.New("per-process GPU counters are not available")

// processUse is one process's use of one GPU adapter.
type processUse struct {
	pid int
	// luid is the adapter's locally unique id as Windows writes it in
	// counter instance names ("0x00000000_0x0000D1B8"): it tells adapters
	// apart even when their PCI address is unknown.
	luid string
	// adapter is the adapter's PCI bus, device and function ("01:00.0",
	// busDeviceFunction's form), or "" when it could not be found.
	adapter string
	// dedicatedBytes is the process's dedicated (on-board) GPU memory.
	dedicatedBytes *uint64
	// sharedBytes is the system memory it uses through the GPU.
	sharedBytes *uint64
	// computePercent is the busiest compute engine's (Compute_N or Cuda)
	// utilization. It is a rate, so the first read has none: nil.
	computePercent *float64
}

// fillFromCounters gives the processes NVML listed without memory or
// utilization what the counters say, if this backend has counters and
// some process lacks either. Counters that are not there are said once.
func (b *nvmlBackend) fillFromCounters(ctx context.Context, devs []Device) {
	if b.cfg.counters == nil || b.countersGone || !lacksUse(devs) {
		return
	}
	uses, err := b.cfg.counters.read(ctx)
	switch {
	case errors.Is(err, errNoCounters):
		b.countersGone = true
		b.log.Info("per-process GPU memory and use stay n/a: Windows' GPU counters cannot be read here", "reason", err.Error())
		return
	case err != nil:
		b.log.Debug("reading per-process GPU counters", "error", err.Error())
		return
	}
	fillProcessUse(devs, uses)
}

// lacksUse reports whether some process of an awake device has no memory
// or no utilization figure.
func lacksUse(devs []Device) bool {
	for _, d := range devs {
		for _, p := range d.Processes {
			if p.UsedMemoryBytes == nil || p.SMPercent == nil {
				return true
			}
		}
	}
	return false
}

// fillProcessUse sets the memory and SM percent of every process that NVML
// left without them from the uses on that process's device, and its
// shared memory, which NVML never gives. A use belongs
// to a device when its adapter's PCI address is the device's; when no
// address could be found, only the unambiguous case counts: one NVML
// device and one adapter in all the counters. NVML's own figures are kept.
func fillProcessUse(devs []Device, uses []processUse) {
	luids := map[string]bool{}
	for _, u := range uses {
		luids[u.luid] = true
	}
	for i := range devs {
		d := &devs[i]
		bdf := busDeviceFunction(d.PCIBusID)
		mine := map[int]*processUse{}
		for _, u := range uses {
			ours := u.adapter != "" && u.adapter == bdf || u.adapter == "" && len(devs) == 1 && len(luids) == 1
			if !ours {
				continue
			}
			m, seen := mine[u.pid]
			if !seen {
				m = &processUse{pid: u.pid}
				mine[u.pid] = m
			}
			// Linked adapters list a process once per physical GPU: memory
			// adds up, the busiest engine is the highest.
			if u.dedicatedBytes != nil {
				m.dedicatedBytes = ptr(*u.dedicatedBytes + deref(m.dedicatedBytes))
			}
			if u.sharedBytes != nil {
				m.sharedBytes = ptr(*u.sharedBytes + deref(m.sharedBytes))
			}
			if u.computePercent != nil && (m.computePercent == nil || *u.computePercent > *m.computePercent) {
				m.computePercent = ptr(*u.computePercent)
			}
		}
		for j := range d.Processes {
			p := &d.Processes[j]
			u, ok := mine[p.PID]
			if !ok {
				continue
			}
			if p.UsedMemoryBytes == nil && u.dedicatedBytes != nil {
				p.UsedMemoryBytes = ptr(*u.dedicatedBytes)
			}
			if u.sharedBytes != nil {
				p.SharedMemoryBytes = ptr(*u.sharedBytes)
			}
			if p.SMPercent == nil && u.computePercent != nil {
				p.SMPercent = ptr(uint32(math.Round(min(100, max(0, *u.computePercent)))))
			}
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// busDeviceFunction is the "bb:dd.f" part of a PCI bus id in pciBusID's
// form ("0000:01:00.0" gives "01:00.0"), which is what Windows knows of an
// adapter's address; "" for anything else.
func busDeviceFunction(busID string) string {
	parts := strings.Split(busID, ":")
	if len(parts) < 2 {
		return ""
	}
	bdf := strings.ToLower(parts[len(parts)-2] + ":" + parts[len(parts)-1])
	var bus, dev, fn uint
	if n, err := fmt.Sscanf(bdf, "%x:%x.%x", &bus, &dev, &fn); err != nil || n != 3 {
		return ""
	}
	return formatBDF(bus, dev, fn)
}

// formatBDF writes a PCI bus, device and function as busDeviceFunction does.
func formatBDF(bus, dev, fn uint) string { return fmt.Sprintf("%02x:%02x.%x", bus, dev, fn) }

// gpuCounterInstance is what Windows encodes in the instance name of a GPU
// counter: "pid_1234_luid_0x00000000_0x0000D1B8_phys_0" (GPU Process
// Memory), with "_eng_0_engtype_Compute_0" after it for GPU Engine.
type gpuCounterInstance struct {
	pid     int
	luid    string // "0x00000000_0x0000D1B8": high part, then low part
	engType string // "3D", "Compute_0", "Cuda", ...; "" for memory counters
}

// parseGPUCounterInstance reads an instance name; ok is false for names of
// another shape.
func parseGPUCounterInstance(name string) (in gpuCounterInstance, ok bool) {
	rest, ok := strings.CutPrefix(name, "pid_")
	if !ok {
		return in, false
	}
	pidText, rest, ok := strings.Cut(rest, "_luid_")
	if !ok {
		return in, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid < 0 {
		return in, false
	}
	f := strings.Split(rest, "_")
	if len(f) < 2 || !strings.HasPrefix(f[0], "0x") || !strings.HasPrefix(f[1], "0x") {
		return in, false
	}
	in = gpuCounterInstance{pid: pid, luid: f[0] + "_" + f[1]}
	if _, eng, found := strings.Cut(rest, "_engtype_"); found {
		in.engType = eng
	}
	return in, true
}

// parseLUID splits a luid as parseGPUCounterInstance keeps it into the
// halves Windows' LUID struct holds.
func parseLUID(luid string) (high int32, low uint32, ok bool) {
	hi, lo, found := strings.Cut(luid, "_")
	if !found {
		return 0, 0, false
	}
	h, err1 := strconv.ParseUint(strings.TrimPrefix(hi, "0x"), 16, 32)
	l, err2 := strconv.ParseUint(strings.TrimPrefix(lo, "0x"), 16, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return int32(uint32(h)), uint32(l), true
}

// isComputeEngine reports whether an engine type counts as compute work:
// Compute_N engines and the Cuda engine (what PyTorch's kernels run on).
func isComputeEngine(engType string) bool {
	return strings.HasPrefix(engType, "Compute") || engType == "Cuda"
}

// counterValue is one instance's value of one counter.
type counterValue struct {
	instance string
	value    float64
}

// collectUse turns the raw counter arrays into uses: memory from "GPU
// Process Memory\Dedicated Usage" and "...\Shared Usage", compute from
// "GPU Engine\Utilization Percentage" (nil engines: not read yet). adapterOf gives a luid's PCI
// address ("" when unknown). Instances of other shapes are skipped.
func collectUse(memory, shared, engines []counterValue, adapterOf func(luid string) string) []processUse {
	type key struct {
		pid  int
		luid string
	}
	byKey := map[key]*processUse{}
	var order []key
	get := func(in gpuCounterInstance) *processUse {
		k := key{in.pid, in.luid}
		if u, ok := byKey[k]; ok {
			return u
		}
		u := &processUse{pid: in.pid, luid: in.luid, adapter: adapterOf(in.luid)}
		byKey[k] = u
		order = append(order, k)
		return u
	}
	for _, v := range memory {
		in, ok := parseGPUCounterInstance(v.instance)
		if !ok || in.engType != "" || v.value < 0 {
			continue
		}
		u := get(in)
		u.dedicatedBytes = ptr(uint64(v.value) + deref(u.dedicatedBytes))
	}
	for _, v := range shared {
		in, ok := parseGPUCounterInstance(v.instance)
		if !ok || in.engType != "" || v.value < 0 {
			continue
		}
		u := get(in)
		u.sharedBytes = ptr(uint64(v.value) + deref(u.sharedBytes))
	}
	for _, v := range engines {
		in, ok := parseGPUCounterInstance(v.instance)
		if !ok || !isComputeEngine(in.engType) {
			continue
		}
		u := get(in)
		if u.computePercent == nil || v.value > *u.computePercent {
			u.computePercent = ptr(v.value)
		}
	}
	out := make([]processUse, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}
