// This file reads one device through the shared NVML calls: its identity,
// memory, sensors, MIG mode and processes, leaving a suspended GPU asleep.

package gpu

import (
	"fmt"
	"strings"
)

// NVML's "no value" markers.
const (
	// notAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned long long: the
	// memory of a process the driver cannot account (WDDM, WSL2).
	notAvailable = ^uint64(0)
	// noInstance is the GPU or compute instance id of a process outside MIG.
	noInstance = ^uint32(0)
)

// unsupported reports whether ret means the driver has no answer for this
// device: "not supported" on this GPU, or a function this driver's NVML
// lacks. Such a field is nil (not said), not an error.
func unsupported(ret nvmlReturn) bool {
	return ret == retNotSupported || ret == retFunctionNotFound
}

// device reads device i. Each failed call leaves its field empty and adds
// to Device.Error; the other calls are still made. A device that
// cfg.asleep says is suspended is reported asleep after its handle, bus
// id, name and UUID, none of which wakes it.
func (b *nvmlBackend) device(i int) (d Device) {
	d = Device{Index: i, Processes: []Process{}}
	var errs []string
	fail := func(what string, ret nvmlReturn) {
		errs = append(errs, what+": "+errorString(ret))
		d.Lost = d.Lost || lost(ret)
	}
	// failUnlessUnsupported: "not supported" is an answer (nil), not an error.
	failUnlessUnsupported := func(what string, ret nvmlReturn) {
		if !unsupported(ret) {
			fail(what, ret)
		}
	}
	defer func() { d.Error = strings.Join(errs, "; ") }()

	dev, ret := b.lib.device(i)
	if ret != retSuccess {
		d.Name = fmt.Sprintf("GPU %d", i)
		fail("handle", ret)
		return d
	}
	if v, ret := dev.pciBusID(); ret == retSuccess {
		d.PCIBusID = pciBusID(v)
	} else {
		fail("pci info", ret)
	}
	if v, ret := dev.name(); ret == retSuccess {
		d.Name = v
	} else {
		d.Name = fmt.Sprintf("GPU %d", i)
		fail("name", ret)
	}
	if v, ret := dev.uuid(); ret == retSuccess {
		d.UUID = v
	} else {
		fail("uuid", ret)
	}
	if b.cfg.asleep != nil && b.cfg.asleep(d.PCIBusID) {
		d.Asleep = true
		return d
	}

	if major, minor, ret := dev.computeCapability(); ret == retSuccess {
		d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	} else {
		fail("compute capability", ret)
	}
	if total, used, ret := dev.memory(); ret == retSuccess {
		d.MemoryTotalBytes, d.MemoryUsedBytes = total, used
	} else {
		fail("memory", ret)
	}
	if g, m, ret := dev.utilization(); ret == retSuccess {
		d.UtilizationGPU, d.UtilizationMemory = ptr(g), ptr(m)
	} else {
		failUnlessUnsupported("utilization", ret)
	}
	if t, ret := dev.temperature(); ret == retSuccess {
		d.TemperatureC = ptr(t)
	} else {
		failUnlessUnsupported("temperature", ret)
	}
	if mw, ret := dev.powerUsage(); ret == retSuccess {
		d.PowerWatts = ptr(float64(mw) / 1000)
	} else {
		failUnlessUnsupported("power", ret)
	}
	if mw, ret := dev.enforcedPowerLimit(); ret == retSuccess {
		d.PowerLimitWatts = ptr(float64(mw) / 1000)
	} else {
		failUnlessUnsupported("power limit", ret)
	}
	if on, ret := dev.migEnabled(); ret == retSuccess {
		d.MIGEnabled = on
	} else {
		failUnlessUnsupported("MIG mode", ret)
	}
	key := d.UUID
	if key == "" {
		key = fmt.Sprintf("index %d", i)
	}
	d.Processes = b.processes(dev, key, &errs)
	if hd, ok := dev.(nvmlHealthDevice); ok && !d.Lost {
		b.readHealth(hd, key, &d, &errs)
	}
	return d
}

// processes lists the compute, graphics and MPS processes, one entry per
// PID: a PID in several lists keeps the first type (compute, then
// graphics, then MPS).
func (b *nvmlBackend) processes(dev nvmlDevice, key string, errs *[]string) []Process {
	byPID := map[uint32]*Process{}
	var order []uint32
	for _, list := range []processList{listCompute, listGraphics, listMPS} {
		infos, ret := dev.processes(list)
		if ret != retSuccess {
			if !unsupported(ret) && ret != retNotFound {
				*errs = append(*errs, string(list)+" processes: "+errorString(ret))
			}
			continue
		}
		for _, in := range infos {
			var mem *uint64
			if in.usedMemory != notAvailable {
				mem = ptr(in.usedMemory)
			}
			if p, seen := byPID[in.pid]; seen {
				if p.UsedMemoryBytes == nil {
					p.UsedMemoryBytes = mem
				}
				continue
			}
			p := &Process{PID: int(in.pid), Type: string(list), UsedMemoryBytes: mem}
			if in.gpuInstance != noInstance {
				p.GPUInstanceID = ptr(in.gpuInstance)
			}
			if in.computeInstance != noInstance {
				p.ComputeInstanceID = ptr(in.computeInstance)
			}
			byPID[in.pid] = p
			order = append(order, in.pid)
		}
	}
	if len(order) > 0 {
		b.utilization(dev, key, byPID, errs)
	}
	out := make([]Process, 0, len(order))
	for _, pid := range order {
		out = append(out, *byPID[pid])
	}
	return out
}

// utilization fills SM and memory percent from each process's newest
// sample since the last snapshot. No samples (retNotFound) means the GPU
// was idle: 0 %. "Not supported" leaves them nil.
func (b *nvmlBackend) utilization(dev nvmlDevice, key string, byPID map[uint32]*Process, errs *[]string) {
	samples, ret := dev.processUtilization(b.lastSeen[key])
	switch {
	case ret == retSuccess, ret == retNotFound:
	case unsupported(ret):
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
		newest = max(newest, s.timestamp)
		p, ok := byPID[s.pid]
		if !ok {
			continue
		}
		if t, seen := newestOf[s.pid]; seen && t > s.timestamp {
			continue
		}
		newestOf[s.pid] = s.timestamp
		p.SMPercent, p.MemPercent = ptr(s.smUtil), ptr(s.memUtil)
	}
	b.lastSeen[key] = newest
}

// pciBusID turns NVML's bus id ("00000000:07:00.0", upper-case hex, an
// 8-digit domain) into the short form Linux names the device by in
// /sys/bus/pci/devices ("0000:07:00.0"), which people know from lspci.
func pciBusID(nvmlBusID string) string {
	s := strings.ToLower(strings.TrimSpace(nvmlBusID))
	if dom, rest, ok := strings.Cut(s, ":"); ok && len(dom) == 8 && strings.HasPrefix(dom, "0000") {
		s = dom[4:] + ":" + rest
	}
	return s
}

// cString reads a NUL-terminated C char array.
func cString[T ~int8 | ~byte](raw []T) string {
	var sb strings.Builder
	for _, c := range raw {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}
