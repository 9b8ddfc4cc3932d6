//go:build linux && cgo

// This file reads one device through NVML: its identity, memory, sensors,
// MIG mode and processes, leaving a suspended GPU asleep.

package gpu

import (
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVML's "no value" markers.
const (
	// notAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned long long: the
	// memory of a process the driver cannot account (WDDM, WSL2).
	notAvailable = ^uint64(0)
	// noInstance is the GPU or compute instance id of a process outside MIG.
	noInstance = ^uint32(0)
)

// processUtilizationTries bounds the retries when samples arrive between
// go-nvml's sizing call and its reading call.
const processUtilizationTries = 3

// device reads device i. Each failed call leaves its field empty and adds
// to Device.Error; the other calls are still made. A device whose PCI
// runtime power state is "suspended" is reported asleep after its handle,
// bus id, name and UUID, none of which wakes it.
func (b *nvmlBackend) device(i int) (d Device) {
	d = Device{Index: i, Processes: []Process{}}
	var errs []string
	fail := func(what string, ret nvml.Return) { errs = append(errs, what+": "+errorString(ret)) }
	// failUnlessUnsupported: "not supported" is an answer (nil), not an error.
	failUnlessUnsupported := func(what string, ret nvml.Return) {
		if ret != nvml.ERROR_NOT_SUPPORTED {
			fail(what, ret)
		}
	}
	defer func() { d.Error = strings.Join(errs, "; ") }()

	dev, ret := b.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		d.Name = fmt.Sprintf("GPU %d", i)
		fail("handle", ret)
		return d
	}
	if p, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
		d.PCIBusID = sysfsBusID(cString(p.BusId[:]))
	} else {
		fail("pci info", ret)
	}
	if v, ret := dev.GetName(); ret == nvml.SUCCESS {
		d.Name = v
	} else {
		d.Name = fmt.Sprintf("GPU %d", i)
		fail("name", ret)
	}
	if v, ret := dev.GetUUID(); ret == nvml.SUCCESS {
		d.UUID = v
	} else {
		fail("uuid", ret)
	}
	if runtimeSuspended(b.sysfs, d.PCIBusID) {
		d.Asleep = true
		return d
	}

	if major, minor, ret := dev.GetCudaComputeCapability(); ret == nvml.SUCCESS {
		d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	} else {
		fail("compute capability", ret)
	}
	if m, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		d.MemoryTotalBytes, d.MemoryUsedBytes = m.Total, m.Used
	} else {
		fail("memory", ret)
	}
	if u, ret := dev.GetUtilizationRates(); ret == nvml.SUCCESS {
		d.UtilizationGPU, d.UtilizationMemory = ptr(u.Gpu), ptr(u.Memory)
	} else {
		failUnlessUnsupported("utilization", ret)
	}
	if t, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		d.TemperatureC = ptr(t)
	} else {
		failUnlessUnsupported("temperature", ret)
	}
	if mw, ret := dev.GetPowerUsage(); ret == nvml.SUCCESS {
		d.PowerWatts = ptr(float64(mw) / 1000)
	} else {
		failUnlessUnsupported("power", ret)
	}
	if b.has[symEnforcedPowerLimit] {
		if mw, ret := dev.GetEnforcedPowerLimit(); ret == nvml.SUCCESS {
			d.PowerLimitWatts = ptr(float64(mw) / 1000)
		} else {
			failUnlessUnsupported("power limit", ret)
		}
	}
	if b.has[symMigMode] {
		if cur, _, ret := dev.GetMigMode(); ret == nvml.SUCCESS {
			d.MIGEnabled = cur == nvml.DEVICE_MIG_ENABLE
		} else {
			failUnlessUnsupported("MIG mode", ret)
		}
	}
	key := d.UUID
	if key == "" {
		key = fmt.Sprintf("index %d", i)
	}
	d.Processes = b.processes(dev, key, &errs)
	return d
}

// processes lists the compute, graphics and MPS processes, one entry per
// PID: a PID in several lists keeps the first type (compute, then
// graphics, then MPS). go-nvml picks the v3/v2/v1 call the driver offers
// and grows its buffer on INSUFFICIENT_SIZE itself.
func (b *nvmlBackend) processes(dev nvml.Device, key string, errs *[]string) []Process {
	type source struct {
		typ  string
		list func() ([]nvml.ProcessInfo, nvml.Return)
	}
	sources := []source{{"compute", dev.GetComputeRunningProcesses}, {"graphics", dev.GetGraphicsRunningProcesses}}
	if b.has[symMPSProcesses] {
		sources = append(sources, source{"mps", dev.GetMPSComputeRunningProcesses})
	}
	byPID := map[uint32]*Process{}
	var order []uint32
	for _, src := range sources {
		infos, ret := src.list()
		if ret != nvml.SUCCESS {
			if ret != nvml.ERROR_NOT_SUPPORTED && ret != nvml.ERROR_NOT_FOUND {
				*errs = append(*errs, src.typ+" processes: "+errorString(ret))
			}
			continue
		}
		for _, in := range infos {
			var mem *uint64
			if in.UsedGpuMemory != notAvailable {
				mem = ptr(in.UsedGpuMemory)
			}
			if p, seen := byPID[in.Pid]; seen {
				if p.UsedMemoryBytes == nil {
					p.UsedMemoryBytes = mem
				}
				continue
			}
			p := &Process{PID: int(in.Pid), Type: src.typ, UsedMemoryBytes: mem}
			if in.GpuInstanceId != noInstance {
				p.GPUInstanceID = ptr(in.GpuInstanceId)
			}
			if in.ComputeInstanceId != noInstance {
				p.ComputeInstanceID = ptr(in.ComputeInstanceId)
			}
			byPID[in.Pid] = p
			order = append(order, in.Pid)
		}
	}
	if len(order) > 0 && b.has[symProcessUtilization] {
		b.utilization(dev, key, byPID, errs)
	}
	out := make([]Process, 0, len(order))
	for _, pid := range order {
		out = append(out, *byPID[pid])
	}
	return out
}

// utilization fills SM and memory percent from each process's newest
// sample since the last snapshot. No samples (ERROR_NOT_FOUND) means the
// GPU was idle: 0 %. NOT_SUPPORTED leaves them nil.
func (b *nvmlBackend) utilization(dev nvml.Device, key string, byPID map[uint32]*Process, errs *[]string) {
	samples, ret := processSamples(dev, b.lastSeen[key])
	switch ret {
	case nvml.SUCCESS, nvml.ERROR_NOT_FOUND:
	case nvml.ERROR_NOT_SUPPORTED:
		return
	default:
		*errs = append(*errs, "process utilization: "+errorString(ret))
		return
	}
	for _, p := range byPID {
		p.SMPercent, p.MemPercent = ptr(uint32(0)), ptr(uint32(0))
	}
	newest := b.lastSeen[key]
	newestOf := map[uint32]uint64{}
	for _, s := range samples {
		newest = max(newest, s.TimeStamp)
		p, ok := byPID[s.Pid]
		if !ok {
			continue
		}
		if t, seen := newestOf[s.Pid]; seen && t > s.TimeStamp {
			continue
		}
		newestOf[s.Pid] = s.TimeStamp
		p.SMPercent, p.MemPercent = ptr(s.SmUtil), ptr(s.MemUtil)
	}
	b.lastSeen[key] = newest
}

// processSamples calls GetProcessUtilization, handling what go-nvml leaves
// to the caller: it sizes its buffer with a first call and reads with a
// second, so samples that arrive in between make the second call return
// INSUFFICIENT_SIZE (or panic slicing past its buffer); that is retried. A
// first call that reports zero samples comes back as INSUFFICIENT_SIZE
// with an empty list: no samples.
func processSamples(dev nvml.Device, since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
	for range processUtilizationTries {
		samples, ret, panicked := callProcessUtilization(dev, since)
		switch {
		case panicked:
		case ret == nvml.ERROR_INSUFFICIENT_SIZE && len(samples) == 0:
			return nil, nvml.ERROR_NOT_FOUND
		case ret != nvml.ERROR_INSUFFICIENT_SIZE:
			return samples, ret
		}
	}
	return nil, nvml.ERROR_INSUFFICIENT_SIZE
}

func callProcessUtilization(dev nvml.Device, since uint64) (s []nvml.ProcessUtilizationSample, ret nvml.Return, panicked bool) {
	defer func() {
		if recover() != nil {
			s, ret, panicked = nil, nvml.ERROR_INSUFFICIENT_SIZE, true
		}
	}()
	s, ret = dev.GetProcessUtilization(since)
	return s, ret, false
}

// cString reads a NUL-terminated C char array.
func cString(raw []int8) string {
	var sb strings.Builder
	for _, c := range raw {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}
