//go:build linux && cgo

package gpu

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// openPlatform loads libnvidia-ml through go-nvml.
func openPlatform(o Options) Backend {
	return newNVML(nvml.New(), o)
}

// nvmlBackend reads the GPUs through an nvml.Interface: the real library,
// or go-nvml's mock in tests.
type nvmlBackend struct {
	lib   nvml.Interface
	sysfs string
	log   *slog.Logger

	// has says whether the driver's NVML has a function newer than the
	// oldest drivers: calling a missing one would crash the process.
	has map[string]bool

	mu sync.Mutex
	// lastSeen is the newest process-utilization sample time per device
	// UUID, so each snapshot asks only for samples since the last one.
	lastSeen map[string]uint64
	closed   bool
}

var _ Backend = (*nvmlBackend)(nil)

// newNVML initialises lib. When Init fails (no library, no driver) it
// returns the null backend and never calls lib again: go-nvml aborts the
// process when a function is called after a failed Init.
func newNVML(lib nvml.Interface, o Options) Backend {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if ret := safeInit(lib); ret != nvml.SUCCESS {
		reason := fmt.Sprintf("NVML could not start: %s", errorString(ret))
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			reason = "NVML (libnvidia-ml.so.1) was not found: no NVIDIA driver is installed"
		}
		log.Info("no NVIDIA driver", "reason", reason)
		return nullBackend{reason: reason}
	}
	sysfs := o.SysfsRoot
	if sysfs == "" {
		sysfs = "/sys"
	}
	return &nvmlBackend{lib: lib, sysfs: sysfs, log: log, lastSeen: map[string]uint64{}, has: lookupNewer(lib, log)}
}

// newerSymbols are NVML functions that old drivers lack. go-nvml picks the
// versioned process calls (v3/v2/v1) itself; these it does not guard.
var newerSymbols = []string{
	"nvmlDeviceGetMPSComputeRunningProcesses",
	"nvmlDeviceGetMigMode",
	"nvmlDeviceGetProcessUtilization",
	"nvmlDeviceGetEnforcedPowerLimit",
	"nvmlSystemGetCudaDriverVersion",
}

// lookupNewer checks each newer symbol once, after a successful Init.
func lookupNewer(lib nvml.Interface, log *slog.Logger) map[string]bool {
	has := map[string]bool{}
	ext := lib.Extensions()
	for _, sym := range newerSymbols {
		has[sym] = ext.LookupSymbol(sym) == nil
		if !has[sym] {
			log.Info("this driver's NVML lacks a function; it is skipped", "symbol", sym)
		}
	}
	return has
}

// safeInit calls Init, turning a panic from a broken library into an error.
func safeInit(lib nvml.Interface) (ret nvml.Return) {
	defer func() {
		if r := recover(); r != nil {
			ret = nvml.ERROR_UNINITIALIZED
		}
	}()
	return lib.Init()
}

func (b *nvmlBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if ret := b.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("shutting down NVML: %s", errorString(ret))
	}
	return nil
}

// Snapshot reads the driver and every device. What fails is recorded in
// State.Error or Device.Error; the rest is still read.
func (b *nvmlBackend) Snapshot(ctx context.Context) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := State{Source: "nvml", Devices: []Device{}}
	if b.closed {
		st.Error = "NVML was shut down"
		return st
	}
	var errs []string
	if v, ret := b.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		st.Driver = v
	} else {
		errs = append(errs, "driver version: "+errorString(ret))
	}
	if !b.has["nvmlSystemGetCudaDriverVersion"] {
		errs = append(errs, "CUDA driver version: "+errorString(nvml.ERROR_FUNCTION_NOT_FOUND))
	} else if v, ret := b.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		st.CUDADriver = fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
	} else {
		errs = append(errs, "CUDA driver version: "+errorString(ret))
	}

	asleep := b.sleepingBusIDs()
	count, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		errs = append(errs, "device count: "+errorString(ret))
	}
	for i := 0; i < count; i++ {
		if ctx.Err() != nil {
			errs = append(errs, "interrupted")
			break
		}
		st.Devices = append(st.Devices, b.device(i, asleep))
	}
	st.Error = strings.Join(errs, "; ")
	if st.Driver == "" && len(st.Devices) > 0 {
		st.Driver = "unknown"
	}
	return st
}

// sleepingBusIDs lists the NVIDIA PCI devices whose runtime power state is
// "suspended", by sysfs name (0000:07:00.0), read from sysfs alone so that
// no NVML call wakes them.
func (b *nvmlBackend) sleepingBusIDs() []string {
	dir := filepath.Join(b.sysfs, "bus", "pci", "devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		vendor, err := os.ReadFile(filepath.Join(dir, e.Name(), "vendor"))
		if err != nil || strings.TrimSpace(string(vendor)) != "0x10de" {
			continue
		}
		class, _ := os.ReadFile(filepath.Join(dir, e.Name(), "class"))
		if !strings.HasPrefix(strings.TrimSpace(string(class)), "0x03") {
			continue // audio and USB functions of the card
		}
		status, err := os.ReadFile(filepath.Join(dir, e.Name(), "power", "runtime_status"))
		if err == nil && strings.TrimSpace(string(status)) == "suspended" {
			out = append(out, strings.ToLower(e.Name()))
		}
	}
	return out
}

// device reads one device. A suspended device is reported asleep and only
// its PCI address is read: no query that would wake it is made.
func (b *nvmlBackend) device(i int, asleep []string) (d Device) {
	d = Device{Index: i, Processes: []Process{}}
	var errs []string
	fail := func(what string, ret nvml.Return) { errs = append(errs, what+": "+errorString(ret)) }
	defer func() { d.Error = strings.Join(errs, "; ") }()

	if len(asleep) > 0 {
		// NVML enumerates devices in PCI bus order; so does sysfs.
		if bus, ok := busIDForIndex(b.sysfs, i); ok && slices.Contains(asleep, bus) {
			d.PCIBusID, d.Asleep, d.Name = bus, true, "NVIDIA GPU (asleep)"
			return d
		}
	}
	dev, ret := b.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		d.Name = fmt.Sprintf("GPU %d", i)
		fail("handle", ret)
		return d
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
	if p, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
		d.PCIBusID = busID(p.BusId[:])
	} else {
		fail("pci info", ret)
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
		g, m := u.Gpu, u.Memory
		d.UtilizationGPU, d.UtilizationMemory = &g, &m
	} else if ret != nvml.ERROR_NOT_SUPPORTED {
		fail("utilization", ret)
	}
	if t, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		d.TemperatureC = &t
	} else if ret != nvml.ERROR_NOT_SUPPORTED {
		fail("temperature", ret)
	}
	if p, ret := dev.GetPowerUsage(); ret == nvml.SUCCESS {
		w := float64(p) / 1000
		d.PowerWatts = &w
	} else if ret != nvml.ERROR_NOT_SUPPORTED {
		fail("power", ret)
	}
	if b.has["nvmlDeviceGetEnforcedPowerLimit"] {
		if p, ret := dev.GetEnforcedPowerLimit(); ret == nvml.SUCCESS {
			w := float64(p) / 1000
			d.PowerLimitWatts = &w
		} else if ret != nvml.ERROR_NOT_SUPPORTED {
			fail("power limit", ret)
		}
	}
	if b.has["nvmlDeviceGetMigMode"] {
		if cur, _, ret := dev.GetMigMode(); ret == nvml.SUCCESS {
			d.MIGEnabled = cur == nvml.DEVICE_MIG_ENABLE
		} else if ret != nvml.ERROR_NOT_SUPPORTED {
			fail("MIG mode", ret)
		}
	}
	d.Processes = b.processes(dev, d.UUID, &errs)
	return d
}

// processes lists compute, graphics and MPS processes (go-nvml picks the
// v3/v2/v1 call the driver offers and grows the buffer on
// INSUFFICIENT_SIZE), one entry per PID, with SM and memory utilization.
func (b *nvmlBackend) processes(dev nvml.Device, uuid string, errs *[]string) []Process {
	byPID := map[uint32]*Process{}
	var order []uint32
	type source struct {
		typ  string
		list func() ([]nvml.ProcessInfo, nvml.Return)
	}
	sources := []source{{"compute", dev.GetComputeRunningProcesses}, {"graphics", dev.GetGraphicsRunningProcesses}}
	if b.has["nvmlDeviceGetMPSComputeRunningProcesses"] {
		sources = append(sources, source{"mps", dev.GetMPSComputeRunningProcesses})
	}
	for _, src := range sources {
		infos, ret := src.list()
		if ret != nvml.SUCCESS {
			if ret != nvml.ERROR_NOT_SUPPORTED && ret != nvml.ERROR_NOT_FOUND {
				*errs = append(*errs, src.typ+" processes: "+errorString(ret))
			}
			continue
		}
		for _, in := range infos {
			if _, seen := byPID[in.Pid]; seen {
				continue // compute wins over graphics and MPS
			}
			p := &Process{PID: int(in.Pid), Type: src.typ}
			if in.UsedGpuMemory != notAvailable {
				m := in.UsedGpuMemory
				p.UsedMemoryBytes = &m
			}
			if in.GpuInstanceId != 0xFFFFFFFF {
				g, c := in.GpuInstanceId, in.ComputeInstanceId
				p.GPUInstanceID, p.ComputeInstanceID = &g, &c
			}
			byPID[in.Pid] = p
			order = append(order, in.Pid)
		}
	}
	if len(order) > 0 && b.has["nvmlDeviceGetProcessUtilization"] {
		b.utilization(dev, uuid, byPID, errs)
	}
	out := make([]Process, 0, len(order))
	for _, pid := range order {
		out = append(out, *byPID[pid])
	}
	return out
}

// utilization fills SM and memory percent from the samples since the last
// snapshot. No samples (ERROR_NOT_FOUND) means the GPU was idle: 0 %.
func (b *nvmlBackend) utilization(dev nvml.Device, uuid string, byPID map[uint32]*Process, errs *[]string) {
	samples, ret := dev.GetProcessUtilization(b.lastSeen[uuid])
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_FOUND:
		samples = nil
	case nvml.ERROR_NOT_SUPPORTED:
		return
	default:
		*errs = append(*errs, "process utilization: "+errorString(ret))
		return
	}
	zero := uint32(0)
	for _, p := range byPID {
		p.SMPercent, p.MemPercent = &zero, &zero
	}
	newest := b.lastSeen[uuid]
	for _, s := range samples {
		if s.TimeStamp > newest {
			newest = s.TimeStamp
		}
		if p, ok := byPID[s.Pid]; ok {
			sm, mem := s.SmUtil, s.MemUtil
			// Several samples per process: keep the highest of the interval.
			if p.SMPercent == nil || *p.SMPercent < sm {
				p.SMPercent = &sm
			}
			if p.MemPercent == nil || *p.MemPercent < mem {
				p.MemPercent = &mem
			}
		}
	}
	b.lastSeen[uuid] = newest
}

// busID converts NVML's "00000000:07:00.0" into sysfs's "0000:07:00.0".
func busID(raw []int8) string {
	var sb strings.Builder
	for _, c := range raw {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	s := strings.ToLower(sb.String())
	if dom, rest, ok := strings.Cut(s, ":"); ok && len(dom) == 8 {
		s = dom[4:] + ":" + rest
	}
	return s
}

// busIDForIndex is the sysfs name of the i-th NVIDIA display device in PCI
// bus order, the order NVML enumerates in.
func busIDForIndex(sysfs string, i int) (string, bool) {
	dir := filepath.Join(sysfs, "bus", "pci", "devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var gpus []string
	for _, e := range ents {
		vendor, err := os.ReadFile(filepath.Join(dir, e.Name(), "vendor"))
		class, err2 := os.ReadFile(filepath.Join(dir, e.Name(), "class"))
		if err == nil && err2 == nil && strings.TrimSpace(string(vendor)) == "0x10de" && strings.HasPrefix(strings.TrimSpace(string(class)), "0x03") {
			gpus = append(gpus, strings.ToLower(e.Name()))
		}
	}
	slices.Sort(gpus)
	if i < len(gpus) {
		return gpus[i], true
	}
	return "", false
}

// errorString is NVML's text for a return code, without calling into the
// library (which must not be touched after a failed Init).
func errorString(ret nvml.Return) string {
	if s, ok := returnNames[ret]; ok {
		return s
	}
	return fmt.Sprintf("NVML error %d", int32(ret))
}

var returnNames = map[nvml.Return]string{
	nvml.ERROR_UNINITIALIZED:           "NVML is not initialized",
	nvml.ERROR_INVALID_ARGUMENT:        "invalid argument",
	nvml.ERROR_NOT_SUPPORTED:           "not supported",
	nvml.ERROR_NO_PERMISSION:           "no permission",
	nvml.ERROR_NOT_FOUND:               "not found",
	nvml.ERROR_INSUFFICIENT_SIZE:       "insufficient size",
	nvml.ERROR_INSUFFICIENT_POWER:      "insufficient power",
	nvml.ERROR_DRIVER_NOT_LOADED:       "the NVIDIA driver is not loaded",
	nvml.ERROR_TIMEOUT:                 "timeout",
	nvml.ERROR_IRQ_ISSUE:               "interrupt request issue",
	nvml.ERROR_LIBRARY_NOT_FOUND:       "NVML library not found",
	nvml.ERROR_FUNCTION_NOT_FOUND:      "function not found in this driver's NVML",
	nvml.ERROR_CORRUPTED_INFOROM:       "corrupted inforom",
	nvml.ERROR_GPU_IS_LOST:             "the GPU has fallen off the bus",
	nvml.ERROR_RESET_REQUIRED:          "the GPU needs a reset",
	nvml.ERROR_OPERATING_SYSTEM:        "operating system error",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: "driver and NVML library versions differ (reboot after a driver update)",
	nvml.ERROR_IN_USE:                  "in use",
	nvml.ERROR_MEMORY:                  "out of memory",
	nvml.ERROR_NO_DATA:                 "no data",
	nvml.ERROR_UNKNOWN:                 "unknown NVML error",
}

// notAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned long long: the
// memory of a process that the driver cannot account (WDDM, WSL2).
const notAvailable = ^uint64(0)
