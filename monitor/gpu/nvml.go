// This file is the NVML backend both platforms share: the calls it makes
// (nvmlLibrary, nvmlDevice), NVML's return codes, and the snapshot of the
// driver. Linux answers the calls through go-nvml (nvml_linux.go), Windows
// through nvml.dll (nvml_windows.go); what the state says is assembled
// here once, so both platforms report the same things the same way.

package gpu

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// nvmlReturn is an NVML return code, nvmlReturn_t in nvml.h. The values are
// the C library's ABI (go-nvml's nvml.Return has the same numbers; a Linux
// test checks that).
type nvmlReturn int32

// The return codes this package names (nvml.h, "nvmlReturn_t").
const (
	retSuccess               nvmlReturn = 0
	retUninitialized         nvmlReturn = 1
	retInvalidArgument       nvmlReturn = 2
	retNotSupported          nvmlReturn = 3
	retNoPermission          nvmlReturn = 4
	retNotFound              nvmlReturn = 6
	retInsufficientSize      nvmlReturn = 7
	retInsufficientPower     nvmlReturn = 8
	retDriverNotLoaded       nvmlReturn = 9
	retTimeout               nvmlReturn = 10
	retIRQIssue              nvmlReturn = 11
	retLibraryNotFound       nvmlReturn = 12
	retFunctionNotFound      nvmlReturn = 13
	retCorruptedInforom      nvmlReturn = 14
	retGPUIsLost             nvmlReturn = 15
	retResetRequired         nvmlReturn = 16
	retOperatingSystem       nvmlReturn = 17
	retLibRMVersionMismatch  nvmlReturn = 18
	retInUse                 nvmlReturn = 19
	retMemory                nvmlReturn = 20
	retNoData                nvmlReturn = 21
	retInsufficientResources nvmlReturn = 23
	retUnknown               nvmlReturn = 999
)

// errorString is NVML's text for a return code, without calling into the
// library (which must not be touched after a failed Init).
func errorString(ret nvmlReturn) string {
	if s, ok := returnNames[ret]; ok {
		return s
	}
	return fmt.Sprintf("NVML error %d", int32(ret))
}

// returnNames follows the descriptions in nvml.h.
var returnNames = map[nvmlReturn]string{
	retUninitialized:         "NVML is not initialized",
	retInvalidArgument:       "invalid argument",
	retNotSupported:          "not supported",
	retNoPermission:          "no permission",
	retNotFound:              "not found",
	retInsufficientSize:      "insufficient size",
	retInsufficientPower:     "insufficient power",
	retDriverNotLoaded:       "the NVIDIA driver is not loaded",
	retTimeout:               "timeout",
	retIRQIssue:              "interrupt request issue",
	retLibraryNotFound:       "NVML library not found",
	retFunctionNotFound:      "function not found in this driver's NVML",
	retCorruptedInforom:      "corrupted inforom",
	retGPUIsLost:             "the GPU has fallen off the bus",
	retResetRequired:         "the GPU needs a reset",
	retOperatingSystem:       "operating system error",
	retLibRMVersionMismatch:  "driver and NVML library versions differ (reboot after a driver update)",
	retInUse:                 "in use",
	retMemory:                "out of memory",
	retNoData:                "no data",
	retInsufficientResources: "insufficient resources",
	retUnknown:               "unknown NVML error",
}

// nvmlLibrary is the part of an initialised NVML the snapshot reads. A
// function the driver's NVML lacks answers retFunctionNotFound and is
// never called: calling a missing symbol would kill the process.
type nvmlLibrary interface {
	driverVersion() (string, nvmlReturn)
	// cudaDriverVersion is 1000*major + 10*minor (12040 for 12.4).
	cudaDriverVersion() (int, nvmlReturn)
	deviceCount() (int, nvmlReturn)
	device(i int) (nvmlDevice, nvmlReturn)
	shutdown() nvmlReturn
}

// nvmlXidSource is a library that reports Xid events (Linux only: NVML
// has no events on Windows). xids drains what arrived since the last
// call, without waiting, by device index.
type nvmlXidSource interface {
	xids(devices int) map[int][]Xid
}

// nvmlDevice is one device's calls, answered as nvmlLibrary's are.
type nvmlDevice interface {
	// pciBusID is NVML's bus id ("00000000:07:00.0").
	pciBusID() (string, nvmlReturn)
	name() (string, nvmlReturn)
	uuid() (string, nvmlReturn)
	computeCapability() (major, minor int, ret nvmlReturn)
	memory() (total, used uint64, ret nvmlReturn)
	utilization() (gpu, memory uint32, ret nvmlReturn)
	temperature() (celsius uint32, ret nvmlReturn)
	powerUsage() (milliwatts uint32, ret nvmlReturn)
	enforcedPowerLimit() (milliwatts uint32, ret nvmlReturn)
	migEnabled() (bool, nvmlReturn)
	// processes lists one of the three process lists, whole (the
	// implementation grows its buffer when the list grows between calls).
	processes(list processList) ([]processInfo, nvmlReturn)
	// processUtilization returns the samples newer than since (µs);
	// retNotFound when there are none.
	processUtilization(since uint64) ([]utilizationSample, nvmlReturn)
}

// processList names NVML's three per-device process lists.
type processList string

const (
	listCompute  processList = "compute"
	listGraphics processList = "graphics"
	listMPS      processList = "mps"
)

// processInfo is nvmlProcessInfo_t: usedMemory is notAvailable under WDDM,
// the instance ids noInstance outside MIG.
type processInfo struct {
	pid                          uint32
	usedMemory                   uint64
	gpuInstance, computeInstance uint32
}

// utilizationSample is the part of nvmlProcessUtilizationSample_t read here.
type utilizationSample struct {
	pid             uint32
	timestamp       uint64
	smUtil, memUtil uint32
}

// nvmlConfig is what a platform gives the shared backend beside the library.
type nvmlConfig struct {
	log *slog.Logger
	// asleep reports whether the device with this bus id (pciBusID form) is
	// suspended and must not be queried; nil means never.
	asleep func(busID string) bool
	// counters fills in per-process use NVML leaves out (WDDM); nil where
	// NVML says it all.
	counters processCounters
	// library is the file NVML was loaded from, where the platform knows
	// it (nvml.dll's path on Windows): State.Library.
	library string
	// wsl is set under WSL2: State.WSL.
	wsl bool
	// resets reads the display driver's resets (Windows' event log); nil
	// where there is no such log (Linux): no DRIVER_RESET there.
	resets *resetReader
}

// nvmlBackend reads the GPUs through an initialised nvmlLibrary.
type nvmlBackend struct {
	lib nvmlLibrary
	cfg nvmlConfig
	log *slog.Logger

	mu sync.Mutex
	// lastSeen is the newest process-utilization sample time (µs) per
	// device, so each snapshot asks only for the samples since the last.
	lastSeen map[string]uint64
	// countersGone is set once the per-process counters said they are not
	// there, so that is said once and not asked again.
	countersGone bool
	// health is what is remembered per device (by UUID) of reading its
	// health (nvml_health.go).
	health map[string]*deviceHealth
	closed bool
}

var _ Backend = (*nvmlBackend)(nil)

// newNVMLBackend wraps lib, on which Init has succeeded.
func newNVMLBackend(lib nvmlLibrary, cfg nvmlConfig) *nvmlBackend {
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	return &nvmlBackend{lib: lib, cfg: cfg, log: cfg.log, lastSeen: map[string]uint64{}, health: map[string]*deviceHealth{}}
}

// Close shuts NVML down once; Init succeeded, or this backend would not
// exist.
func (b *nvmlBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.cfg.counters != nil {
		b.cfg.counters.close()
	}
	if ret := b.lib.shutdown(); ret != retSuccess {
		return fmt.Errorf("shutting down NVML: %s", errorString(ret))
	}
	return nil
}

// Snapshot reads the driver and every device. What fails is recorded in
// State.Error or Device.Error; the rest is still read.
func (b *nvmlBackend) Snapshot(ctx context.Context) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := State{Source: "nvml", Library: b.cfg.library, WSL: b.cfg.wsl, Devices: []Device{}}
	if b.closed {
		st.Error = "NVML was shut down"
		return st
	}
	var errs []string
	if v, ret := b.lib.driverVersion(); ret == retSuccess {
		st.Driver = v
	} else {
		// Init succeeded, so a driver is there even if it will not say
		// which: keep HasDriver true.
		st.Driver = "unknown"
		errs = append(errs, "driver version: "+errorString(ret))
	}
	if v, ret := b.lib.cudaDriverVersion(); ret == retSuccess {
		st.CUDADriver = cudaVersion(v)
	} else {
		errs = append(errs, "CUDA driver version: "+errorString(ret))
	}

	count, ret := b.lib.deviceCount()
	if ret != retSuccess {
		errs = append(errs, "device count: "+errorString(ret))
	}
	for i := range count {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Sprintf("reading device %d: %v", i, err))
			break
		}
		st.Devices = append(st.Devices, b.device(i))
	}
	if src, ok := b.lib.(nvmlXidSource); ok && len(st.Devices) > 0 {
		for i, xids := range src.xids(len(st.Devices)) {
			if i >= 0 && i < len(st.Devices) {
				st.Devices[i].Xids = xids
			}
		}
	}
	b.fillFromCounters(ctx, st.Devices)
	if b.cfg.resets != nil {
		st.DriverResets = b.cfg.resets.read(ctx)
	}
	st.Error = strings.Join(errs, "; ")
	return st
}

// cudaVersion formats NVML's 1000*major + 10*minor (12040) as "12.4".
func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10) }
