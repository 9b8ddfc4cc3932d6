//go:build linux && cgo

// This file answers the shared per-device NVML calls through go-nvml, and
// works around what go-nvml leaves to its caller in GetProcessUtilization.

package gpu

import (
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// processUtilizationTries bounds the retries when samples arrive between
// go-nvml's sizing call and its reading call.
const processUtilizationTries = 3

// goNVMLDevice is one go-nvml device handle.
type goNVMLDevice struct {
	dev nvml.Device
	has map[string]bool
}

func (g goNVMLDevice) pciBusID() (string, nvmlReturn) {
	p, ret := g.dev.GetPciInfo()
	return cString(p.BusId[:]), nvmlReturn(ret)
}

func (g goNVMLDevice) name() (string, nvmlReturn) {
	v, ret := g.dev.GetName()
	return v, nvmlReturn(ret)
}

func (g goNVMLDevice) uuid() (string, nvmlReturn) {
	v, ret := g.dev.GetUUID()
	return v, nvmlReturn(ret)
}

func (g goNVMLDevice) computeCapability() (int, int, nvmlReturn) {
	major, minor, ret := g.dev.GetCudaComputeCapability()
	return major, minor, nvmlReturn(ret)
}

func (g goNVMLDevice) memory() (uint64, uint64, nvmlReturn) {
	m, ret := g.dev.GetMemoryInfo()
	return m.Total, m.Used, nvmlReturn(ret)
}

func (g goNVMLDevice) utilization() (uint32, uint32, nvmlReturn) {
	u, ret := g.dev.GetUtilizationRates()
	return u.Gpu, u.Memory, nvmlReturn(ret)
}

func (g goNVMLDevice) temperature() (uint32, nvmlReturn) {
	t, ret := g.dev.GetTemperature(nvml.TEMPERATURE_GPU)
	return t, nvmlReturn(ret)
}

func (g goNVMLDevice) powerUsage() (uint32, nvmlReturn) {
	mw, ret := g.dev.GetPowerUsage()
	return mw, nvmlReturn(ret)
}

func (g goNVMLDevice) enforcedPowerLimit() (uint32, nvmlReturn) {
	if !g.has[symEnforcedPowerLimit] {
		return 0, retFunctionNotFound
	}
	mw, ret := g.dev.GetEnforcedPowerLimit()
	return mw, nvmlReturn(ret)
}

func (g goNVMLDevice) migEnabled() (bool, nvmlReturn) {
	if !g.has[symMigMode] {
		return false, retFunctionNotFound
	}
	cur, _, ret := g.dev.GetMigMode()
	return cur == nvml.DEVICE_MIG_ENABLE, nvmlReturn(ret)
}

// processes calls the list's go-nvml function, which picks the v3/v2/v1
// call the driver offers and grows its buffer on INSUFFICIENT_SIZE itself.
func (g goNVMLDevice) processes(list processList) ([]processInfo, nvmlReturn) {
	var infos []nvml.ProcessInfo
	var ret nvml.Return
	switch list {
	case listCompute:
		infos, ret = g.dev.GetComputeRunningProcesses()
	case listGraphics:
		infos, ret = g.dev.GetGraphicsRunningProcesses()
	case listMPS:
		if !g.has[symMPSProcesses] {
			return nil, retFunctionNotFound
		}
		infos, ret = g.dev.GetMPSComputeRunningProcesses()
	}
	out := make([]processInfo, len(infos))
	for i, in := range infos {
		out[i] = processInfo{pid: in.Pid, usedMemory: in.UsedGpuMemory, gpuInstance: in.GpuInstanceId, computeInstance: in.ComputeInstanceId}
	}
	return out, nvmlReturn(ret)
}

func (g goNVMLDevice) processUtilization(since uint64) ([]utilizationSample, nvmlReturn) {
	if !g.has[symProcessUtilization] {
		return nil, retFunctionNotFound
	}
	samples, ret := processSamples(g.dev, since)
	out := make([]utilizationSample, len(samples))
	for i, s := range samples {
		out[i] = utilizationSample{pid: s.Pid, timestamp: s.TimeStamp, smUtil: s.SmUtil, memUtil: s.MemUtil}
	}
	return out, nvmlReturn(ret)
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

var _ nvmlHealthDevice = goNVMLDevice{}

// The health calls (nvml_health.go). Each symbol is looked up after Init
// (lookupNewer): a driver older than the call answers "function not
// found", which the backend remembers as not supported.

func (g goNVMLDevice) clocksEventReasons() (uint64, nvmlReturn) {
	switch {
	case g.has[symClocksEventReasons]:
		v, ret := g.dev.GetCurrentClocksEventReasons()
		return v, nvmlReturn(ret)
	case g.has[symClocksThrottleReasons]:
		// Drivers before the rename (535) have the same bits under the
		// old name.
		v, ret := g.dev.GetCurrentClocksThrottleReasons()
		return v, nvmlReturn(ret)
	}
	return 0, retFunctionNotFound
}

func (g goNVMLDevice) fieldValues(ids []uint32) ([]fieldReading, nvmlReturn) {
	if !g.has[symFieldValues] {
		return nil, retFunctionNotFound
	}
	vals := make([]nvml.FieldValue, len(ids))
	for i, id := range ids {
		vals[i].FieldId = id
	}
	if ret := g.dev.GetFieldValues(vals); ret != nvml.SUCCESS {
		return nil, nvmlReturn(ret)
	}
	out := make([]fieldReading, len(vals))
	for i, v := range vals {
		out[i] = fieldReading{value: fieldUint(v), ret: nvmlReturn(v.NvmlReturn)}
	}
	return out, retSuccess
}

// fieldUint reads a field's value as the unsigned integer it holds, by
// its value type (little-endian, as the C union is laid out on amd64 and
// arm64).
func fieldUint(v nvml.FieldValue) uint64 {
	var u uint64
	for i := 7; i >= 0; i-- {
		u = u<<8 | uint64(v.Value[i])
	}
	switch nvml.ValueType(v.ValueType) {
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return u & 0xffffffff
	case nvml.VALUE_TYPE_DOUBLE:
		return uint64(math.Float64frombits(u))
	}
	return u
}

func (g goNVMLDevice) marginTemperature() (int32, nvmlReturn) {
	if !g.has[symMarginTemperature] {
		return 0, retFunctionNotFound
	}
	m, ret := g.dev.GetMarginTemperature()
	return m.MarginTemperature, nvmlReturn(ret)
}

func (g goNVMLDevice) pcieCurrent() (uint32, uint32, nvmlReturn) {
	if !g.has[symPCIeLink] {
		return 0, 0, retFunctionNotFound
	}
	gen, ret := g.dev.GetCurrPcieLinkGeneration()
	if ret != nvml.SUCCESS {
		return 0, 0, nvmlReturn(ret)
	}
	width, ret := g.dev.GetCurrPcieLinkWidth()
	return uint32(gen), uint32(width), nvmlReturn(ret)
}

func (g goNVMLDevice) pcieMax() (uint32, uint32, nvmlReturn) {
	if !g.has[symPCIeLink] {
		return 0, 0, retFunctionNotFound
	}
	gen, ret := g.dev.GetMaxPcieLinkGeneration()
	if ret != nvml.SUCCESS {
		return 0, 0, nvmlReturn(ret)
	}
	width, ret := g.dev.GetMaxPcieLinkWidth()
	return uint32(gen), uint32(width), nvmlReturn(ret)
}

func (g goNVMLDevice) cardMaxPCIeGen() (uint32, nvmlReturn) {
	if !g.has[symCardMaxPCIeGen] {
		return 0, retFunctionNotFound
	}
	gen, ret := g.dev.GetGpuMaxPcieLinkGeneration()
	return uint32(gen), nvmlReturn(ret)
}

func (g goNVMLDevice) volatileDBE() (uint64, nvmlReturn) {
	if !g.has[symECCErrors] {
		return 0, retFunctionNotFound
	}
	n, ret := g.dev.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	return n, nvmlReturn(ret)
}

func (g goNVMLDevice) retiredPending() (bool, nvmlReturn) {
	if !g.has[symRetiredPending] {
		return false, retFunctionNotFound
	}
	s, ret := g.dev.GetRetiredPagesPendingStatus()
	return s == nvml.FEATURE_ENABLED, nvmlReturn(ret)
}

func (g goNVMLDevice) remappedRows() (bool, bool, nvmlReturn) {
	if !g.has[symRemappedRows] {
		return false, false, retFunctionNotFound
	}
	_, _, pending, failure, ret := g.dev.GetRemappedRows()
	return pending, failure, nvmlReturn(ret)
}
