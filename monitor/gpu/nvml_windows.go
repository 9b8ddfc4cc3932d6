//go:build windows && (amd64 || arm64)

// This file loads nvml.dll, the NVML the NVIDIA driver installs on
// Windows, without cgo: from System32 (current drivers) or from
// %ProgramFiles%\NVIDIA Corporation\NVSMI (old ones), never from the
// current directory or the program's folder, where anyone could drop a
// DLL of that name. Each function is resolved by name, the newest
// versioned symbol first; one the driver lacks answers "function not
// found" and is never called.

package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// openPlatform loads nvml.dll and reads per-process use from PDH.
func openPlatform(o Options) Backend {
	return openNVMLDLL(o, newPDHCounters)
}

// nvmlFunc is one NVML function this backend calls.
type nvmlFunc int

const (
	fnInit nvmlFunc = iota
	fnShutdown
	fnDriverVersion
	fnCudaDriverVersion
	fnDeviceCount
	fnHandleByIndex
	fnPciInfo
	fnName
	fnUUID
	fnComputeCapability
	fnMemory
	fnUtilization
	fnTemperature
	fnPowerUsage
	fnPowerLimit
	fnMigMode
	fnComputeProcesses
	fnGraphicsProcesses
	fnMPSProcesses
	fnProcessUtilization
	// The health calls (nvml_health.go, nvml_health_windows.go).
	fnClocksEventReasons
	fnFieldValues
	fnMarginTemperature
	fnCurrPcieGen
	fnCurrPcieWidth
	fnMaxPcieGen
	fnMaxPcieWidth
	fnCardMaxPcieGen
	fnTotalEccErrors
	fnRetiredPending
	fnRemappedRows
	fnCount
)

// nvmlSymbols is every name a function may be exported under, newest
// first (nvml.h keeps the old names for old callers; a driver that
// predates a version lacks it). Memory is read with the v1 call on
// purpose: its "used" is what the Linux backend reports (go-nvml calls
// v1 too); v2 counts reserved memory apart.
var nvmlSymbols = [fnCount][]string{
	fnInit:               {"nvmlInit_v2", "nvmlInit"},
	fnShutdown:           {"nvmlShutdown"},
	fnDriverVersion:      {"nvmlSystemGetDriverVersion"},
	fnCudaDriverVersion:  {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
	fnDeviceCount:        {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
	fnHandleByIndex:      {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
	fnPciInfo:            {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
	fnName:               {"nvmlDeviceGetName"},
	fnUUID:               {"nvmlDeviceGetUUID"},
	fnComputeCapability:  {"nvmlDeviceGetCudaComputeCapability"},
	fnMemory:             {"nvmlDeviceGetMemoryInfo"},
	fnUtilization:        {"nvmlDeviceGetUtilizationRates"},
	fnTemperature:        {"nvmlDeviceGetTemperature"},
	fnPowerUsage:         {"nvmlDeviceGetPowerUsage"},
	fnPowerLimit:         {"nvmlDeviceGetEnforcedPowerLimit"},
	fnMigMode:            {"nvmlDeviceGetMigMode"},
	fnComputeProcesses:   {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"},
	fnGraphicsProcesses:  {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses"},
	fnMPSProcesses:       {"nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses"},
	fnProcessUtilization: {"nvmlDeviceGetProcessUtilization"},
	// Drivers before 535 have the clock-event reasons under the old name.
	fnClocksEventReasons: {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
	fnFieldValues:        {"nvmlDeviceGetFieldValues"},
	fnMarginTemperature:  {"nvmlDeviceGetMarginTemperature"},
	fnCurrPcieGen:        {"nvmlDeviceGetCurrPcieLinkGeneration"},
	fnCurrPcieWidth:      {"nvmlDeviceGetCurrPcieLinkWidth"},
	fnMaxPcieGen:         {"nvmlDeviceGetMaxPcieLinkGeneration"},
	fnMaxPcieWidth:       {"nvmlDeviceGetMaxPcieLinkWidth"},
	fnCardMaxPcieGen:     {"nvmlDeviceGetGpuMaxPcieLinkGeneration"},
	fnTotalEccErrors:     {"nvmlDeviceGetTotalEccErrors"},
	fnRetiredPending:     {"nvmlDeviceGetRetiredPagesPendingStatus"},
	fnRemappedRows:       {"nvmlDeviceGetRemappedRows"},
}

// dllNVML is nvml.dll loaded into this process, initialised, with each
// function resolved once.
type dllNVML struct {
	dll *windows.DLL
	// procs[f] is nil when the driver exports none of f's names.
	procs [fnCount]*windows.Proc
}

var _ nvmlLibrary = (*dllNVML)(nil)

// openNVMLDLL loads and initialises nvml.dll. Without it, or when Init
// fails, it returns the null backend saying why in one line, and the DLL
// is released: after a failed Init no other NVML function is called.
// newCounters opens the per-process counters (nil: none).
func openNVMLDLL(o Options, newCounters func(*slog.Logger) processCounters) Backend {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "gpu")
	lib, reason := loadNVMLDLL(log)
	if lib == nil {
		log.Info("no NVIDIA driver", "reason", reason)
		return nullBackend{reason: reason}
	}
	cfg := nvmlConfig{log: log, library: lib.dll.Name, resets: newResetReader(queryEventLog, log, nil)}
	if newCounters != nil {
		cfg.counters = newCounters(log)
	}
	return newNVMLBackend(lib, cfg)
}

// loadNVMLDLL finds, loads, resolves and initialises nvml.dll, or says why
// it could not.
func loadNVMLDLL(log *slog.Logger) (*dllNVML, string) {
	dll, reason := loadNVMLFile()
	if dll == nil {
		return nil, reason
	}
	lib := &dllNVML{dll: dll}
	var missing []string
	for f, names := range nvmlSymbols {
		for _, name := range names {
			if p, err := dll.FindProc(name); err == nil {
				lib.procs[f] = p
				break
			}
		}
		if lib.procs[f] == nil {
			missing = append(missing, names[len(names)-1])
		}
	}
	if len(missing) > 0 {
		log.Info("this driver's nvml.dll lacks functions; what they read is left out", "path", dll.Name, "functions", strings.Join(missing, ","))
	}
	if lib.procs[fnInit] == nil {
		dll.Release()
		return nil, fmt.Sprintf("%s is not NVML: it has no nvmlInit", dll.Name)
	}
	if ret := lib.call(fnInit); ret != retSuccess {
		dll.Release()
		return nil, "NVML could not start: " + errorString(ret) + " (" + dll.Name + ")"
	}
	log.Debug("NVML loaded", "path", dll.Name)
	return lib, ""
}

// loadNVMLFile loads nvml.dll from System32, else from NVSMI. The DLL's
// Name is the path it was loaded from.
func loadNVMLFile() (*windows.DLL, string) {
	sys := systemNVMLPath()
	h, sysErr := windows.LoadLibraryEx("nvml.dll", 0, windows.LOAD_LIBRARY_SEARCH_SYSTEM32)
	if sysErr == nil {
		return &windows.DLL{Name: modulePath(h, sys), Handle: h}, ""
	}
	old := nvsmiNVMLPath()
	_, statErr := os.Stat(old)
	if errors.Is(sysErr, windows.ERROR_MOD_NOT_FOUND) && statErr != nil {
		return nil, fmt.Sprintf("nvml.dll was not found in %s or %s: no NVIDIA driver is installed", filepath.Dir(sys), filepath.Dir(old))
	}
	if statErr != nil {
		return nil, fmt.Sprintf("loading %s: %v", sys, sysErr)
	}
	// An absolute path, with its own folder and System32 searched for
	// what it imports: never the current directory or PATH.
	h, err := windows.LoadLibraryEx(old, 0, windows.LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR|windows.LOAD_LIBRARY_SEARCH_SYSTEM32)
	if err != nil {
		return nil, fmt.Sprintf("loading %s: %v", old, err)
	}
	return &windows.DLL{Name: modulePath(h, old), Handle: h}, ""
}

// systemNVMLPath is where current drivers install nvml.dll.
func systemNVMLPath() string {
	dir, err := windows.GetSystemDirectory()
	if err != nil {
		dir = `C:\Windows\System32`
	}
	return filepath.Join(dir, "nvml.dll")
}

// nvsmiNVMLPath is where drivers before the DCH packaging (R418 and older
// standard drivers) installed nvml.dll.
func nvsmiNVMLPath() string {
	pf := os.Getenv("ProgramFiles")
	if pf == "" {
		if p, err := windows.KnownFolderPath(windows.FOLDERID_ProgramFiles, 0); err == nil {
			pf = p
		} else {
			pf = `C:\Program Files`
		}
	}
	return filepath.Join(pf, "NVIDIA Corporation", "NVSMI", "nvml.dll")
}

// modulePath is the file a loaded module came from, or fallback.
func modulePath(h windows.Handle, fallback string) string {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetModuleFileName(h, &buf[0], uint32(len(buf)))
	if err != nil || n == 0 {
		return fallback
	}
	return windows.UTF16ToString(buf[:n])
}

// call calls f with args, or answers retFunctionNotFound when the driver
// lacks it. A pointer converted to uintptr in the call expression is kept
// on the heap and alive until the call returns (uintptrescapes), as in
// Proc.Call.
//
//go:uintptrescapes
func (l *dllNVML) call(f nvmlFunc, args ...uintptr) nvmlReturn {
	p := l.procs[f]
	if p == nil {
		return retFunctionNotFound
	}
	r, _, _ := p.Call(args...)
	return nvmlReturn(int32(r))
}

// version is the NVML API version of the symbol f resolved to: N for a
// name ending in _vN, else 1; 0 when f is missing.
func (l *dllNVML) version(f nvmlFunc) int {
	p := l.procs[f]
	if p == nil {
		return 0
	}
	if i := strings.LastIndex(p.Name, "_v"); i >= 0 {
		var n int
		if _, err := fmt.Sscanf(p.Name[i+2:], "%d", &n); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// Buffer sizes nvml.h gives for strings, NUL included.
const (
	driverVersionSize = 80 // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
	deviceNameSize    = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
	deviceUUIDSize    = 96 // NVML_DEVICE_UUID_V2_BUFFER_SIZE
)

func (l *dllNVML) driverVersion() (string, nvmlReturn) {
	var buf [driverVersionSize]byte
	ret := l.call(fnDriverVersion, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return cString(buf[:]), ret
}

func (l *dllNVML) cudaDriverVersion() (int, nvmlReturn) {
	var v int32
	ret := l.call(fnCudaDriverVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), ret
}

func (l *dllNVML) deviceCount() (int, nvmlReturn) {
	var n uint32
	ret := l.call(fnDeviceCount, uintptr(unsafe.Pointer(&n)))
	return int(n), ret
}

func (l *dllNVML) device(i int) (nvmlDevice, nvmlReturn) {
	var h uintptr // nvmlDevice_t, an opaque pointer
	if ret := l.call(fnHandleByIndex, uintptr(i), uintptr(unsafe.Pointer(&h))); ret != retSuccess {
		return nil, ret
	}
	return dllDevice{lib: l, handle: h}, retSuccess
}

// shutdown shuts NVML down and releases the DLL.
func (l *dllNVML) shutdown() nvmlReturn {
	ret := l.call(fnShutdown)
	l.dll.Release()
	return ret
}
