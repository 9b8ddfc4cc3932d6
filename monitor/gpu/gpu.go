// Package gpu reads the state of the machine's NVIDIA GPUs behind one small
// interface, so that the rest of GPU Canary never depends on NVML being there.
//
// Three backends satisfy Backend: NVML (through go-nvml on Linux, through
// nvml.dll without cgo on Windows, both assembling the state in nvml.go), a
// simulated GPU read from a JSON scenario file (for demos and tests), and a
// null backend that reports "no NVIDIA driver" where NVML cannot be loaded.
// A missing driver is a state shown to the user, never an error that stops
// the program.
package gpu

import (
	"context"
	"log/slog"
)

// Backend is the one boundary between GPU Canary and the GPU driver.
//
// Snapshot never fails as a whole: what could not be read is recorded in
// State.Error (the backend as a whole) or Device.Error (one device), so a
// caller always has something to show.
type Backend interface {
	Snapshot(ctx context.Context) State
	Close() error
}

// State is what the driver says about the machine's GPUs at one moment.
type State struct {
	// Simulated is true when the state comes from a scenario file, so every
	// view can say so.
	Simulated bool `json:"simulated"`
	// Source names the backend: "nvml", "sim:PATH" or "none".
	Source string `json:"source"`
	// Library is the file the driver was read from where it is known:
	// nvml.dll's path on Windows ("C:\Windows\System32\nvml.dll").
	Library string `json:"library,omitempty"`
	// Driver is the kernel driver version ("550.54.15"); empty without a driver.
	Driver string `json:"driver"`
	// CUDADriver is the newest CUDA version the driver supports, major.minor
	// ("12.4"), from SystemGetCudaDriverVersion.
	CUDADriver string `json:"cuda_driver"`
	// CUDADriverDerived is filled from kb (kb.Annotated) when the driver
	// gave its version but not CUDADriver: the newest CUDA version whose
	// driver floor that version meets ("12.2" for 535.104.05), a lower
	// bound. CUDADriver stays as the driver gave it.
	CUDADriverDerived string `json:"cuda_driver_derived,omitempty"`
	// WSL is true under WSL2, where NVML lists no processes (WSLNote).
	WSL     bool     `json:"wsl,omitempty"`
	Devices []Device `json:"devices"`
	// DriverResets are the display driver's resets (Windows' TDR
	// recovery) seen since the last snapshot: Windows does not say which
	// GPU was reset, so they belong to the machine.
	DriverResets []DriverReset `json:"driver_resets,omitempty"`
	// Error says why the backend could not be read ("NVML not found: ...").
	// Empty when everything was read.
	Error string `json:"error"`
}

// HasDriver reports whether an NVIDIA driver answered. A state without one
// is the "no NVIDIA driver" state, not a failure.
func (s State) HasDriver() bool { return s.Driver != "" || len(s.Devices) > 0 }

// Device is one physical GPU (or, for MIG, the parent of its instances).
type Device struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	UUID              string `json:"uuid,omitempty"`
	PCIBusID          string `json:"pci_bus_id,omitempty"`
	ComputeCapability string `json:"compute_capability"` // "8.0"
	// Architecture is filled from kb (kb.Annotated) ("Ampere").
	Architecture     string `json:"architecture,omitempty"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes"`
	MemoryUsedBytes  uint64 `json:"memory_used_bytes"`
	// Utilization, temperature and power are pointers: nil means the driver
	// did not say (not supported, asleep), which is not the same as zero.
	UtilizationGPU    *uint32  `json:"utilization_gpu_percent,omitempty"`
	UtilizationMemory *uint32  `json:"utilization_memory_percent,omitempty"`
	TemperatureC      *uint32  `json:"temperature_c,omitempty"`
	PowerWatts        *float64 `json:"power_watts,omitempty"`
	PowerLimitWatts   *float64 `json:"power_limit_watts,omitempty"`
	// Asleep is true when the PCI runtime power state is "suspended"; such a
	// device is not queried, so that watching it does not wake it.
	Asleep bool `json:"asleep,omitempty"`
	// MIGEnabled is true when the device is partitioned into MIG instances.
	MIGEnabled bool      `json:"mig_enabled,omitempty"`
	Processes  []Process `json:"processes"`
	// What the driver says of the device's health (health.go); each is
	// empty where the driver does not say. ClocksEventReasons are the
	// reasons its clocks are held back now (ReasonSWPowerCap, ...).
	ClocksEventReasons []string  `json:"clocks_event_reasons,omitempty"`
	Throttle           *Throttle `json:"throttle_ns,omitempty"`
	// MarginTemperatureC is how many degrees are left before the GPU
	// slows down to cool (NVML's margin temperature).
	MarginTemperatureC *int32 `json:"margin_temperature_c,omitempty"`
	PCIe               *PCIe  `json:"pcie,omitempty"`
	ECC                *ECC   `json:"ecc,omitempty"`
	// Xids are the Xid errors raised since the last snapshot.
	Xids []Xid `json:"xids,omitempty"`
	// Lost is true when the driver says the GPU has fallen off the bus
	// or needs a reset (every call on it fails so); Error says which.
	Lost bool `json:"lost,omitempty"`
	// Error collects what could not be read for this device.
	Error string `json:"error,omitempty"`
}

// Process is one process the driver reports on a device.
type Process struct {
	PID int `json:"pid"`
	// Type is "compute", "graphics" or "mps".
	Type string `json:"type"`
	// UsedMemoryBytes is nil when NVML cannot report it (WDDM, WSL2): "n/a",
	// never 0.
	UsedMemoryBytes *uint64 `json:"used_memory_bytes"`
	// SharedMemoryBytes is the system memory the process uses through
	// the GPU (Windows' "GPU Process Memory\Shared Usage"): under WDDM
	// the driver falls back on it when the GPU's own memory is full, and
	// a job that spills there runs many times slower (VRAM_SPILL). Nil
	// where the platform does not account it (Linux, NVML).
	SharedMemoryBytes *uint64 `json:"shared_memory_bytes,omitempty"`
	SMPercent         *uint32 `json:"sm_percent,omitempty"`
	MemPercent        *uint32 `json:"mem_percent,omitempty"`
	// GPUInstanceID and ComputeInstanceID are set for a process in a MIG instance.
	GPUInstanceID     *uint32 `json:"gpu_instance_id,omitempty"`
	ComputeInstanceID *uint32 `json:"compute_instance_id,omitempty"`
}

// Options selects and configures a backend.
type Options struct {
	// SimFile, when set, replaces NVML with the scenario in that file.
	SimFile string
	// SysfsRoot is where /sys is mounted (tests point it at a tree of their
	// own); empty means "/sys".
	SysfsRoot string
	// WSL is where to look for WSL2 (DetectWSL); the zero value is this
	// machine.
	WSL    WSLProbe
	Logger *slog.Logger
}

// ptr is the address of a copy of v, for the optional fields above.
func ptr[T any](v T) *T { return &v }
