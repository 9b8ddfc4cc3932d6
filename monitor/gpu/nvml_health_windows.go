//go:build windows && (amd64 || arm64)

// This file answers the health calls (nvml_health.go) through nvml.dll,
// with the C structs as nvml.h lays them out. NVML has no events on
// Windows, so there are no Xids here.

package gpu

import (
	"encoding/binary"
	"math"
	"unsafe"
)

type (
	// nvmlFieldValue is nvmlFieldValue_t.
	nvmlFieldValue struct {
		fieldID     uint32
		scopeID     uint32
		timestamp   int64
		latencyUsec int64
		valueType   uint32
		nvmlReturn  uint32
		value       [8]byte
	}
	// nvmlMarginTemperature is nvmlMarginTemperature_v1_t.
	nvmlMarginTemperature struct {
		version uint32
		margin  int32
	}
)

var (
	_ [40]byte = [unsafe.Sizeof(nvmlFieldValue{})]byte{}
	_ [8]byte  = [unsafe.Sizeof(nvmlMarginTemperature{})]byte{}
)

// Values nvml.h gives.
const (
	// marginTemperatureV1 is nvmlMarginTemperature_v1: the struct's size
	// with its version in the top byte.
	marginTemperatureV1    = uint32(unsafe.Sizeof(nvmlMarginTemperature{})) | 1<<24
	memoryErrorUncorrected = 1 // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
	volatileECC            = 0 // NVML_VOLATILE_ECC
	featureEnabled         = 1 // NVML_FEATURE_ENABLED
	valueTypeDouble        = 0 // NVML_VALUE_TYPE_DOUBLE
	valueTypeUnsignedInt   = 1 // NVML_VALUE_TYPE_UNSIGNED_INT
)

var _ nvmlHealthDevice = dllDevice{}

func (d dllDevice) clocksEventReasons() (uint64, nvmlReturn) {
	var v uint64
	ret := d.call(fnClocksEventReasons, uintptr(unsafe.Pointer(&v)))
	return v, ret
}

func (d dllDevice) fieldValues(ids []uint32) ([]fieldReading, nvmlReturn) {
	if len(ids) == 0 {
		return nil, retSuccess
	}
	vals := make([]nvmlFieldValue, len(ids))
	for i, id := range ids {
		vals[i].fieldID = id
	}
	if ret := d.call(fnFieldValues, uintptr(len(vals)), uintptr(unsafe.Pointer(&vals[0]))); ret != retSuccess {
		return nil, ret
	}
	out := make([]fieldReading, len(vals))
	for i, v := range vals {
		u := binary.LittleEndian.Uint64(v.value[:])
		switch v.valueType {
		case valueTypeUnsignedInt:
			u &= 0xffffffff
		case valueTypeDouble:
			u = uint64(math.Float64frombits(u))
		}
		out[i] = fieldReading{value: u, ret: nvmlReturn(int32(v.nvmlReturn))}
	}
	return out, retSuccess
}

func (d dllDevice) marginTemperature() (int32, nvmlReturn) {
	m := nvmlMarginTemperature{version: marginTemperatureV1}
	ret := d.call(fnMarginTemperature, uintptr(unsafe.Pointer(&m)))
	return m.margin, ret
}

// pcieTwo reads a generation and a width with two calls.
func (d dllDevice) pcieTwo(gen, width nvmlFunc) (uint32, uint32, nvmlReturn) {
	var g, w uint32
	if ret := d.call(gen, uintptr(unsafe.Pointer(&g))); ret != retSuccess {
		return 0, 0, ret
	}
	ret := d.call(width, uintptr(unsafe.Pointer(&w)))
	return g, w, ret
}

func (d dllDevice) pcieCurrent() (uint32, uint32, nvmlReturn) {
	return d.pcieTwo(fnCurrPcieGen, fnCurrPcieWidth)
}

func (d dllDevice) pcieMax() (uint32, uint32, nvmlReturn) {
	return d.pcieTwo(fnMaxPcieGen, fnMaxPcieWidth)
}

func (d dllDevice) cardMaxPCIeGen() (uint32, nvmlReturn) {
	var g uint32
	ret := d.call(fnCardMaxPcieGen, uintptr(unsafe.Pointer(&g)))
	return g, ret
}

func (d dllDevice) volatileDBE() (uint64, nvmlReturn) {
	var n uint64
	ret := d.call(fnTotalEccErrors, memoryErrorUncorrected, volatileECC, uintptr(unsafe.Pointer(&n)))
	return n, ret
}

func (d dllDevice) retiredPending() (bool, nvmlReturn) {
	var s uint32
	ret := d.call(fnRetiredPending, uintptr(unsafe.Pointer(&s)))
	return s == featureEnabled, ret
}

func (d dllDevice) remappedRows() (bool, bool, nvmlReturn) {
	var corr, unc, pending, failure uint32
	ret := d.call(fnRemappedRows, uintptr(unsafe.Pointer(&corr)), uintptr(unsafe.Pointer(&unc)),
		uintptr(unsafe.Pointer(&pending)), uintptr(unsafe.Pointer(&failure)))
	return pending != 0, failure != 0, ret
}
