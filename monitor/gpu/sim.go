// This file is the simulated backend: a GPU described by a JSON scenario
// file (DESIGN.md, "GPU scenario file"), for demos and end-to-end tests.

package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// scenario is the JSON of a --gpu-sim file (DESIGN.md).
type scenario struct {
	Driver     string      `json:"driver"`
	CUDADriver string      `json:"cuda_driver"`
	Devices    []simDevice `json:"devices"`
	// WSL simulates WSL2 (State.WSL): list no processes with it, as NVML
	// there lists none.
	WSL bool `json:"wsl"`
	// DriverResets is every display driver reset the scenario has
	// raised (Windows' Display event 4101): as with xid_events, an entry
	// past those the backend has reported is a new one.
	DriverResets []simDriverReset `json:"driver_resets"`
}

// simDriverReset is one entry of driver_resets; the driver defaults to
// NVIDIA's ("nvlddmkm").
type simDriverReset struct {
	Driver string `json:"driver"`
}

type simDevice struct {
	Name              string       `json:"name"`
	UUID              string       `json:"uuid"`
	PCIBusID          string       `json:"pci_bus_id"`
	ComputeCapability string       `json:"compute_capability"`
	MemoryTotalBytes  uint64       `json:"memory_total_bytes"`
	MemoryUsedBytes   *uint64      `json:"memory_used_bytes"`
	UtilizationGPU    *uint32      `json:"utilization_gpu_percent"`
	UtilizationMemory *uint32      `json:"utilization_memory_percent"`
	TemperatureC      *uint32      `json:"temperature_c"`
	PowerWatts        *float64     `json:"power_watts"`
	PowerLimitWatts   *float64     `json:"power_limit_watts"`
	Asleep            bool         `json:"asleep"`
	MIGEnabled        bool         `json:"mig_enabled"`
	Processes         []simProcess `json:"processes"`
	// Health (health.go). XidEvents is every Xid the scenario has
	// raised: an entry past those the backend has reported is a new one.
	// Lost makes every call on the device fail as a GPU off the bus.
	ClocksEventReasons []string  `json:"clocks_event_reasons"`
	ThrottleNS         *Throttle `json:"throttle_ns"`
	MarginTemperatureC *int32    `json:"margin_temperature_c"`
	PCIe               *PCIe     `json:"pcie"`
	ECC                *ECC      `json:"ecc"`
	XidEvents          []Xid     `json:"xid_events"`
	Lost               bool      `json:"lost"`
}

type simProcess struct {
	PID int `json:"pid"`
	// UsedMemoryBytes null is "n/a" (as WDDM reports).
	UsedMemoryBytes *uint64 `json:"used_memory_bytes"`
	SMPercent       *uint32 `json:"sm_percent"`
	MemPercent      *uint32 `json:"mem_percent"`
	Type            string  `json:"type"`
	// SharedMemoryBytes is the system memory the process uses through
	// the GPU, as Windows accounts it (Process.SharedMemoryBytes).
	SharedMemoryBytes *uint64 `json:"shared_memory_bytes"`
}

// ParseScenario reads a scenario file's JSON into the state it simulates.
// `{"devices": []}` with no driver fields is "no NVIDIA driver". Keys are
// case-sensitive, and what no driver would say (null for the file, a
// compute capability that is not major.minor, a version that is not one,
// numbers out of range) is an error saying what is wrong.
func ParseScenario(data []byte) (State, error) {
	// Notepad starts a UTF-8 file with a byte-order mark, which JSON
	// does not allow: it says nothing, so it is dropped.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var sc scenario
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return State{}, fmt.Errorf("invalid scenario JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return State{}, fmt.Errorf("invalid scenario JSON: data after the object")
	}
	if err := checkKeys(data, reflect.TypeFor[scenario](), ""); err != nil {
		return State{}, fmt.Errorf("invalid scenario: %w", err)
	}
	if err := sc.check(); err != nil {
		return State{}, fmt.Errorf("invalid scenario: %w", err)
	}
	st := State{Simulated: true, Driver: sc.Driver, CUDADriver: sc.CUDADriver, WSL: sc.WSL, Devices: []Device{}}
	if sc.Driver == "" && len(sc.Devices) > 0 {
		return State{}, fmt.Errorf("devices are listed but no driver version is given")
	}
	for i, d := range sc.Devices {
		if d.Name == "" {
			return State{}, fmt.Errorf("device %d has no name", i)
		}
		dev := Device{
			Index: i, Name: d.Name, UUID: d.UUID, PCIBusID: d.PCIBusID, ComputeCapability: d.ComputeCapability,
			MemoryTotalBytes: d.MemoryTotalBytes, UtilizationGPU: d.UtilizationGPU, UtilizationMemory: d.UtilizationMemory,
			TemperatureC: d.TemperatureC, PowerWatts: d.PowerWatts, PowerLimitWatts: d.PowerLimitWatts,
			Asleep: d.Asleep, MIGEnabled: d.MIGEnabled, Processes: []Process{},
		}
		var used uint64
		for _, p := range d.Processes {
			typ := p.Type
			switch typ {
			case "":
				typ = "compute"
			case "compute", "graphics", "mps":
			default:
				return State{}, fmt.Errorf("device %d: process %d: type %q is not compute, graphics or mps", i, p.PID, typ)
			}
			if p.UsedMemoryBytes != nil {
				used += *p.UsedMemoryBytes
			}
			dev.Processes = append(dev.Processes, Process{PID: p.PID, Type: typ, UsedMemoryBytes: p.UsedMemoryBytes,
				SharedMemoryBytes: p.SharedMemoryBytes, SMPercent: p.SMPercent, MemPercent: p.MemPercent})
		}
		dev.MemoryUsedBytes = used
		if d.MemoryUsedBytes != nil {
			dev.MemoryUsedBytes = *d.MemoryUsedBytes
		}
		dev.ClocksEventReasons, dev.Throttle, dev.MarginTemperatureC = d.ClocksEventReasons, d.ThrottleNS, d.MarginTemperatureC
		dev.PCIe, dev.ECC, dev.Xids = d.PCIe, d.ECC, d.XidEvents
		if d.Lost {
			// What NVML leaves of a GPU off the bus: its handle's index,
			// and the name and UUID a person knows it by.
			dev = Device{Index: i, Name: d.Name, UUID: d.UUID, PCIBusID: d.PCIBusID, Processes: []Process{},
				Lost: true, Error: errorString(retGPUIsLost)}
		}
		st.Devices = append(st.Devices, dev)
	}
	for _, r := range sc.DriverResets {
		if r.Driver == "" {
			r.Driver = "nvlddmkm"
		}
		st.DriverResets = append(st.DriverResets, DriverReset{Driver: r.Driver})
	}
	return st, nil
}

// ReadScenario reads and parses the scenario file at path, as the
// simulated backend does each time the file changes. The command line
// reads a --gpu-sim file with it before using it: a missing or malformed
// one is an error naming the file, never a silent "no NVIDIA driver".
func ReadScenario(path string) (State, error) {
	data, err := safefs.ReadFile(path, 16<<20)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err // the path is said once, below
	}
	if err != nil {
		return State{}, fmt.Errorf("reading GPU scenario %s: %w", path, err)
	}
	st, err := ParseScenario(data)
	if err != nil {
		return State{}, fmt.Errorf("reading GPU scenario %s: %w", path, err)
	}
	return st, nil
}

// simBackend re-reads its scenario file when it changes, so a test or a
// demo can move a simulated job on and off a GPU.
type simBackend struct {
	path string

	mu    sync.Mutex
	mtime time.Time
	size  int64
	state State
	read  bool
	// good is the last state read from a file that parsed, nil while
	// none has (or the file went away since).
	good *State
	// xidsTold is how many of each device's xid_events (by xidKey) have
	// been reported: only those past it are new.
	xidsTold map[string]int
	// resetsTold is how many of driver_resets have been reported.
	resetsTold int
}

func newSim(path string) *simBackend { return &simBackend{path: path} }

var _ Backend = (*simBackend)(nil)

// Snapshot returns the scenario's state, re-parsed when the file's
// modification time or size changed. A missing or unreadable file is
// the state's error, with no driver. A file that does not parse (caught
// half-written by a script that rewrites it, or a typo) keeps the last
// good reading, with the state's error saying what is wrong and that the
// reading shown is the last good one: a simulated driver does not vanish
// (NO_GPU_DRIVER) between two writes. It is read again at every
// snapshot until it parses.
func (s *simBackend) Snapshot(context.Context) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	source := "sim:" + s.path
	fi, err := os.Stat(s.path)
	if err != nil {
		s.read, s.good = false, nil
		return State{Simulated: true, Source: source, Devices: []Device{}, Error: fmt.Sprintf("reading GPU scenario %s: %v", s.path, err)}
	}
	if s.read && fi.ModTime().Equal(s.mtime) && fi.Size() == s.size {
		return s.newXids(s.state.clone())
	}
	st, err := ReadScenario(s.path)
	switch {
	case err != nil && s.good != nil:
		st = s.good.clone()
		st.Error = err.Error() + "; the last good reading is shown"
		s.read = false // read again at the next snapshot
	case err != nil:
		st = State{Simulated: true, Devices: []Device{}, Error: err.Error()}
		s.read = false
	default:
		st.Source = source
		good := st.clone()
		s.good, s.read = &good, true
	}
	st.Source = source
	s.state, s.mtime, s.size = st, fi.ModTime(), fi.Size()
	return s.newXids(st.clone())
}

// newXids keeps in st only the Xids and driver resets not reported
// before, as a driver's event queue (or Windows' event log) gives each
// once. A list that got shorter (the file was
// rewritten with fewer) starts again from its end.
func (s *simBackend) newXids(st State) State {
	if s.xidsTold == nil {
		s.xidsTold = map[string]int{}
	}
	for i := range st.Devices {
		d := &st.Devices[i]
		if d.Lost {
			continue // a GPU off the bus says nothing; its list is kept for when it is back
		}
		key := xidKey(*d)
		told := s.xidsTold[key]
		if told > len(d.Xids) {
			told = len(d.Xids)
		}
		s.xidsTold[key] = len(d.Xids)
		d.Xids = d.Xids[told:]
		if len(d.Xids) == 0 {
			d.Xids = nil
		}
	}
	told := min(s.resetsTold, len(st.DriverResets))
	s.resetsTold = len(st.DriverResets)
	st.DriverResets = st.DriverResets[told:]
	if len(st.DriverResets) == 0 {
		st.DriverResets = nil
	}
	return st
}

// xidKey names a simulated device for its Xids: its UUID, or its index.
func xidKey(d Device) string {
	if d.UUID != "" {
		return d.UUID
	}
	return fmt.Sprint("index ", d.Index)
}

// Close has nothing to release.
func (s *simBackend) Close() error { return nil }

// clone copies the slices so callers may change what they get.
func (s State) clone() State {
	out := s
	out.DriverResets = append([]DriverReset(nil), s.DriverResets...)
	out.Devices = make([]Device, len(s.Devices))
	for i, d := range s.Devices {
		d.Processes = append([]Process{}, d.Processes...)
		d.ClocksEventReasons = append([]string(nil), d.ClocksEventReasons...)
		d.Xids = append([]Xid(nil), d.Xids...)
		out.Devices[i] = d
	}
	return out
}
