//go:build linux && cgo

// This file answers the shared per-device NVML calls through go-nvml, and
// works around what go-nvml leaves to its caller in GetProcessUtilization.

package gpu

import "github.com/NVIDIA/go-nvml/pkg/nvml"

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
