//go:build windows && (amd64 || arm64)

// This file answers the shared per-device NVML calls through nvml.dll: the
// C structs as nvml.h lays them out, and the sizing of the lists.

package gpu

import "unsafe"

// listTries bounds the calls for a list that keeps growing between the
// call that sizes it and the call that reads it.
const listTries = 4

// The C structs of nvml.h, field for field (Go aligns them as C does on
// 64-bit Windows; the sizes are checked below).
type (
	// nvmlPciInfo is nvmlPciInfo_t of the _v2/_v3 calls. The v1 call's
	// struct is shorter and has its bus id first, where busIDLegacy is.
	nvmlPciInfo struct {
		busIDLegacy    [16]byte
		domain         uint32
		bus            uint32
		device         uint32
		pciDeviceID    uint32
		pciSubSystemID uint32
		busID          [32]byte
	}
	nvmlMemory struct{ total, free, used uint64 }
	nvmlUtil   struct{ gpu, memory uint32 }
	// nvmlProcessInfoV1 is what the unversioned process-list calls fill.
	nvmlProcessInfoV1 struct {
		pid           uint32
		usedGpuMemory uint64
	}
	// nvmlProcessInfoV2 is what the _v2 and _v3 calls fill.
	nvmlProcessInfoV2 struct {
		pid               uint32
		usedGpuMemory     uint64
		gpuInstanceID     uint32
		computeInstanceID uint32
	}
	nvmlProcessUtilizationSample struct {
		pid       uint32
		timeStamp uint64
		smUtil    uint32
		memUtil   uint32
		encUtil   uint32
		decUtil   uint32
	}
)

// The sizes nvml.h's structs have on 64-bit Windows.
var (
	_ [68]byte = [unsafe.Sizeof(nvmlPciInfo{})]byte{}
	_ [24]byte = [unsafe.Sizeof(nvmlMemory{})]byte{}
	_ [16]byte = [unsafe.Sizeof(nvmlProcessInfoV1{})]byte{}
	_ [24]byte = [unsafe.Sizeof(nvmlProcessInfoV2{})]byte{}
	_ [32]byte = [unsafe.Sizeof(nvmlProcessUtilizationSample{})]byte{}
)

// Values nvml.h gives.
const (
	temperatureGPU = 0 // NVML_TEMPERATURE_GPU
	migEnable      = 1 // NVML_DEVICE_MIG_ENABLE
)

// dllDevice is one nvmlDevice_t of nvml.dll.
type dllDevice struct {
	lib    *dllNVML
	handle uintptr
}

var _ nvmlDevice = dllDevice{}

// call calls f on this device; see dllNVML.call.
//
//go:uintptrescapes
func (d dllDevice) call(f nvmlFunc, args ...uintptr) nvmlReturn {
	return d.lib.call(f, append([]uintptr{d.handle}, args...)...)
}

// pciBusID reads busId from the _v3 call (the 8-digit-domain form) and the
// legacy field from older ones, which fill only that.
func (d dllDevice) pciBusID() (string, nvmlReturn) {
	var p nvmlPciInfo
	if ret := d.call(fnPciInfo, uintptr(unsafe.Pointer(&p))); ret != retSuccess {
		return "", ret
	}
	if d.lib.version(fnPciInfo) >= 3 {
		return cString(p.busID[:]), retSuccess
	}
	return cString(p.busIDLegacy[:]), retSuccess
}

func (d dllDevice) name() (string, nvmlReturn) {
	var buf [deviceNameSize]byte
	ret := d.call(fnName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return cString(buf[:]), ret
}

func (d dllDevice) uuid() (string, nvmlReturn) {
	var buf [deviceUUIDSize]byte
	ret := d.call(fnUUID, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return cString(buf[:]), ret
}

func (d dllDevice) computeCapability() (int, int, nvmlReturn) {
	var major, minor int32
	ret := d.call(fnComputeCapability, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor)))
	return int(major), int(minor), ret
}

func (d dllDevice) memory() (uint64, uint64, nvmlReturn) {
	var m nvmlMemory
	ret := d.call(fnMemory, uintptr(unsafe.Pointer(&m)))
	return m.total, m.used, ret
}

func (d dllDevice) utilization() (uint32, uint32, nvmlReturn) {
	var u nvmlUtil
	ret := d.call(fnUtilization, uintptr(unsafe.Pointer(&u)))
	return u.gpu, u.memory, ret
}

func (d dllDevice) temperature() (uint32, nvmlReturn) {
	var t uint32
	ret := d.call(fnTemperature, temperatureGPU, uintptr(unsafe.Pointer(&t)))
	return t, ret
}

func (d dllDevice) powerUsage() (uint32, nvmlReturn) {
	var mw uint32
	ret := d.call(fnPowerUsage, uintptr(unsafe.Pointer(&mw)))
	return mw, ret
}

func (d dllDevice) enforcedPowerLimit() (uint32, nvmlReturn) {
	var mw uint32
	ret := d.call(fnPowerLimit, uintptr(unsafe.Pointer(&mw)))
	return mw, ret
}

func (d dllDevice) migEnabled() (bool, nvmlReturn) {
	var cur, pending uint32
	ret := d.call(fnMigMode, uintptr(unsafe.Pointer(&cur)), uintptr(unsafe.Pointer(&pending)))
	return cur == migEnable, ret
}

// processes reads a process list with the struct its symbol's version
// fills: v1 has no MIG instance ids.
func (d dllDevice) processes(list processList) ([]processInfo, nvmlReturn) {
	f := map[processList]nvmlFunc{listCompute: fnComputeProcesses, listGraphics: fnGraphicsProcesses, listMPS: fnMPSProcesses}[list]
	switch d.lib.version(f) {
	case 0:
		return nil, retFunctionNotFound
	case 1:
		raw, ret := readList[nvmlProcessInfoV1](d, f)
		out := make([]processInfo, len(raw))
		for i, in := range raw {
			out[i] = processInfo{pid: in.pid, usedMemory: in.usedGpuMemory, gpuInstance: noInstance, computeInstance: noInstance}
		}
		return out, ret
	default:
		raw, ret := readList[nvmlProcessInfoV2](d, f)
		out := make([]processInfo, len(raw))
		for i, in := range raw {
			out[i] = processInfo{pid: in.pid, usedMemory: in.usedGpuMemory, gpuInstance: in.gpuInstanceID, computeInstance: in.computeInstanceID}
		}
		return out, ret
	}
}

// readList calls a (device, *count, *items) list function: the first call
// with no room learns the count, the next reads with room to spare, and a
// list that grew in between is asked again.
func readList[T any](d dllDevice, f nvmlFunc) ([]T, nvmlReturn) {
	var buf []T
	for range listTries {
		n := uint32(len(buf))
		var first *T
		if len(buf) > 0 {
			first = &buf[0]
		}
		ret := d.call(f, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(first)))
		switch ret {
		case retSuccess:
			return buf[:min(int(n), len(buf))], retSuccess
		case retInsufficientSize:
			buf = make([]T, n+n/4+1)
		default:
			return nil, ret
		}
	}
	return nil, retInsufficientSize
}

// processUtilization sizes and reads the samples newer than since. A
// sizing call that finds no samples means none: retNotFound.
func (d dllDevice) processUtilization(since uint64) ([]utilizationSample, nvmlReturn) {
	var buf []nvmlProcessUtilizationSample
	for range listTries {
		n := uint32(len(buf))
		var first *nvmlProcessUtilizationSample
		if len(buf) > 0 {
			first = &buf[0]
		}
		ret := d.call(fnProcessUtilization, uintptr(unsafe.Pointer(first)), uintptr(unsafe.Pointer(&n)), uintptr(since))
		switch {
		case ret == retSuccess:
			raw := buf[:min(int(n), len(buf))]
			out := make([]utilizationSample, len(raw))
			for i, s := range raw {
				out[i] = utilizationSample{pid: s.pid, timestamp: s.timeStamp, smUtil: s.smUtil, memUtil: s.memUtil}
			}
			return out, retSuccess
		case ret == retInsufficientSize && n == 0:
			return nil, retNotFound
		case ret == retInsufficientSize:
			buf = make([]nvmlProcessUtilizationSample, n+n/4+1)
		default:
			return nil, ret
		}
	}
	return nil, retInsufficientSize
}
