//go:build linux && cgo

// This file answers the shared NVML calls (nvml.go) through go-nvml, which
// loads libnvidia-ml.so.1: Init (or the null backend when it fails), the
// check for functions old drivers lack, and the library-wide calls.

package gpu

import (
	"log/slog"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// openPlatform loads libnvidia-ml.so.1 through go-nvml: under WSL2 the
// Windows driver's copy in WSLLibDir, which the loader's usual search may
// not find (a distribution's own libnvidia-ml.so.1 cannot reach /dev/dxg).
func openPlatform(o Options) Backend {
	at := nvmlPlace{wsl: DetectWSL(o.WSL)}
	if at.wsl != "" {
		at.library = WSLLibrary(o.WSL)
	}
	if at.library != "" {
		return newNVMLAt(nvml.New(nvml.WithLibraryPath(at.library)), o, at)
	}
	return newNVMLAt(nvml.New(), o, at)
}

// nvmlPlace is where NVML was found: the library's path when it was
// chosen (WSL2), and the sign that says the machine is WSL2 ("" when not).
type nvmlPlace struct {
	library string
	wsl     string
}

// newNVMLAt initialises lib. When Init fails (no library, no driver) it
// returns the null backend and never calls lib again: go-nvml kills the
// process when a function is called after a failed Init.
func newNVMLAt(lib nvml.Interface, o Options, at nvmlPlace) Backend {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "gpu")
	if ret := safeInit(lib); ret != nvml.SUCCESS {
		reason := "NVML could not start: " + errorString(nvmlReturn(ret))
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
	if at.wsl != "" {
		log.Info("WSL2: NVML lists no processes here", "sign", at.wsl, "library", at.library)
	}
	return newNVMLBackend(goNVML{lib: lib, has: lookupNewer(lib, log), events: &xidEvents{log: log}}, nvmlConfig{
		log:     log,
		library: at.library,
		wsl:     at.wsl != "",
		asleep:  func(busID string) bool { return runtimeSuspended(sysfs, busID) },
	})
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
	// The health calls (nvml_health.go).
	symClocksEventReasons    = "nvmlDeviceGetCurrentClocksEventReasons"
	symClocksThrottleReasons = "nvmlDeviceGetCurrentClocksThrottleReasons"
	symFieldValues           = "nvmlDeviceGetFieldValues"
	symMarginTemperature     = "nvmlDeviceGetMarginTemperature"
	symPCIeLink              = "nvmlDeviceGetCurrPcieLinkGeneration"
	symCardMaxPCIeGen        = "nvmlDeviceGetGpuMaxPcieLinkGeneration"
	symECCErrors             = "nvmlDeviceGetTotalEccErrors"
	symRetiredPending        = "nvmlDeviceGetRetiredPagesPendingStatus"
	symRemappedRows          = "nvmlDeviceGetRemappedRows"
	symEventSetCreate        = "nvmlEventSetCreate"
)

var newerSymbols = []string{symMPSProcesses, symMigMode, symProcessUtilization, symEnforcedPowerLimit, symCudaDriverVersion,
	symClocksEventReasons, symClocksThrottleReasons, symFieldValues, symMarginTemperature, symPCIeLink, symCardMaxPCIeGen,
	symECCErrors, symRetiredPending, symRemappedRows, symEventSetCreate}

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

// goNVML is an initialised go-nvml library as the shared backend calls it.
type goNVML struct {
	lib nvml.Interface
	// has says whether the driver's NVML exports a function that old
	// drivers lack: calling a missing one kills the process.
	has map[string]bool
	// events is the Xid event set (nvml_xid_linux.go).
	events *xidEvents
}

func (g goNVML) driverVersion() (string, nvmlReturn) {
	v, ret := g.lib.SystemGetDriverVersion()
	return v, nvmlReturn(ret)
}

func (g goNVML) cudaDriverVersion() (int, nvmlReturn) {
	if !g.has[symCudaDriverVersion] {
		return 0, retFunctionNotFound
	}
	v, ret := g.lib.SystemGetCudaDriverVersion()
	return v, nvmlReturn(ret)
}

func (g goNVML) deviceCount() (int, nvmlReturn) {
	n, ret := g.lib.DeviceGetCount()
	return n, nvmlReturn(ret)
}

func (g goNVML) device(i int) (nvmlDevice, nvmlReturn) {
	d, ret := g.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return nil, nvmlReturn(ret)
	}
	return goNVMLDevice{dev: d, has: g.has}, retSuccess
}

func (g goNVML) shutdown() nvmlReturn {
	g.events.free()
	return nvmlReturn(g.lib.Shutdown())
}
