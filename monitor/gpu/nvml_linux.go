//go:build linux && cgo

// This file is the NVML backend's life cycle: Init (or the null backend
// when it fails), the snapshot of the driver, and Shutdown.

package gpu

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// openPlatform loads libnvidia-ml.so.1 through go-nvml.
func openPlatform(o Options) Backend {
	return newNVML(nvml.New(), o)
}

// nvmlBackend reads the GPUs through an nvml.Interface: the real library,
// or go-nvml's mock in tests.
type nvmlBackend struct {
	lib   nvml.Interface
	sysfs string
	log   *slog.Logger

	// has says whether the driver's NVML exports a function that old
	// drivers lack: calling a missing one kills the process.
	has map[string]bool

	mu sync.Mutex
	// lastSeen is the newest process-utilization sample time (µs) per
	// device, so each snapshot asks only for the samples since the last.
	lastSeen map[string]uint64
	closed   bool
}

var _ Backend = (*nvmlBackend)(nil)

// newNVML initialises lib. When Init fails (no library, no driver) it
// returns the null backend and never calls lib again: go-nvml kills the
// process when a function is called after a failed Init.
func newNVML(lib nvml.Interface, o Options) Backend {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "gpu")
	if ret := safeInit(lib); ret != nvml.SUCCESS {
		reason := "NVML could not start: " + errorString(ret)
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			reason = "the NVML library (libnvidia-ml.so.1) was not found"
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

// Symbols of NVML functions that old drivers lack. go-nvml itself picks
// the v3/v2/v1 process-list calls and Init/PciInfo versions; these it calls
// unguarded.
const (
	symMPSProcesses       = "nvmlDeviceGetMPSComputeRunningProcesses"
	symMigMode            = "nvmlDeviceGetMigMode"
	symProcessUtilization = "nvmlDeviceGetProcessUtilization"
	symEnforcedPowerLimit = "nvmlDeviceGetEnforcedPowerLimit"
	symCudaDriverVersion  = "nvmlSystemGetCudaDriverVersion"
)

var newerSymbols = []string{symMPSProcesses, symMigMode, symProcessUtilization, symEnforcedPowerLimit, symCudaDriverVersion}

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
			ret = nvml.ERROR_UNKNOWN
		}
	}()
	return lib.Init()
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
		// Init succeeded, so a driver is there even if it will not say
		// which: keep HasDriver true.
		st.Driver = "unknown"
		errs = append(errs, "driver version: "+errorString(ret))
	}
	if !b.has[symCudaDriverVersion] {
		errs = append(errs, "CUDA driver version: "+errorString(nvml.ERROR_FUNCTION_NOT_FOUND))
	} else if v, ret := b.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		st.CUDADriver = cudaVersion(v)
	} else {
		errs = append(errs, "CUDA driver version: "+errorString(ret))
	}

	count, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		errs = append(errs, "device count: "+errorString(ret))
	}
	for i := range count {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Sprintf("reading device %d: %v", i, err))
			break
		}
		st.Devices = append(st.Devices, b.device(i))
	}
	st.Error = strings.Join(errs, "; ")
	return st
}

// cudaVersion formats NVML's 1000*major + 10*minor (12040) as "12.4".
func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10) }

// errorString is NVML's text for a return code, without calling into the
// library (which must not be touched after a failed Init).
func errorString(ret nvml.Return) string {
	if s, ok := returnNames[ret]; ok {
		return s
	}
	return fmt.Sprintf("NVML error %d", int32(ret))
}

// returnNames follows the descriptions in nvml.h.
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
