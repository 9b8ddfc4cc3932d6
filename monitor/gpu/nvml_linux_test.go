//go:build linux && cgo

package gpu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

func busBytes(s string) [32]int8 {
	var b [32]int8
	for i, c := range s {
		b[i] = int8(c)
	}
	return b
}

// fakeDevice is a healthy MIG-mode A100: PID 100 in compute (in MIG
// instance 1/0) and graphics, 200 with memory n/a, 300 graphics only, 400
// MPS only. Tests break one call at a time.
func fakeDevice() *mock.Device {
	return noHealth(&mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA A100-SXM4-40GB", nvml.SUCCESS },
		GetUUIDFunc: func() (string, nvml.Return) { return "GPU-aaaa", nvml.SUCCESS },
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busBytes("00000000:07:00.0")}, nvml.SUCCESS
		},
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 8, 0, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 40 << 30, Used: 3 << 30}, nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: 87, Memory: 40}, nvml.SUCCESS
		},
		GetTemperatureFunc:        func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 61, nvml.SUCCESS },
		GetPowerUsageFunc:         func() (uint32, nvml.Return) { return 250500, nvml.SUCCESS },
		GetEnforcedPowerLimitFunc: func() (uint32, nvml.Return) { return 400000, nvml.SUCCESS },
		GetMigModeFunc: func() (int, int, nvml.Return) {
			return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{
				{Pid: 100, UsedGpuMemory: 2 << 30, GpuInstanceId: 1, ComputeInstanceId: 0},
				{Pid: 200, UsedGpuMemory: notAvailable, GpuInstanceId: noInstance, ComputeInstanceId: noInstance},
			}, nvml.SUCCESS
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{
				{Pid: 100, UsedGpuMemory: 2 << 30, GpuInstanceId: noInstance, ComputeInstanceId: noInstance},
				{Pid: 300, UsedGpuMemory: 512 << 20, GpuInstanceId: noInstance, ComputeInstanceId: noInstance},
			}, nvml.SUCCESS
		},
		GetMPSComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: 400, UsedGpuMemory: 1 << 30, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}}, nvml.SUCCESS
		},
		GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return []nvml.ProcessUtilizationSample{
				{Pid: 100, TimeStamp: 5000, SmUtil: 91, MemUtil: 30},
				{Pid: 400, TimeStamp: 6000, SmUtil: 20, MemUtil: 5},
				{Pid: 400, TimeStamp: 4000, SmUtil: 10, MemUtil: 9}, // older: ignored
			}, nvml.SUCCESS
		},
	})
}

// healthyDevice is what fakeDevice reads as.
func healthyDevice() Device {
	return Device{
		Index: 0, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-aaaa", PCIBusID: "0000:07:00.0", ComputeCapability: "8.0",
		MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 3 << 30, UtilizationGPU: ptr(uint32(87)), UtilizationMemory: ptr(uint32(40)),
		TemperatureC: ptr(uint32(61)), PowerWatts: ptr(250.5), PowerLimitWatts: ptr(400.0), MIGEnabled: true,
		Processes: []Process{
			{PID: 100, Type: "compute", UsedMemoryBytes: ptr(uint64(2 << 30)), SMPercent: ptr(uint32(91)), MemPercent: ptr(uint32(30)),
				GPUInstanceID: ptr(uint32(1)), ComputeInstanceID: ptr(uint32(0))},
			{PID: 200, Type: "compute", SMPercent: ptr(uint32(0)), MemPercent: ptr(uint32(0))},
			{PID: 300, Type: "graphics", UsedMemoryBytes: ptr(uint64(512 << 20)), SMPercent: ptr(uint32(0)), MemPercent: ptr(uint32(0))},
			{PID: 400, Type: "mps", UsedMemoryBytes: ptr(uint64(1 << 30)), SMPercent: ptr(uint32(20)), MemPercent: ptr(uint32(5))},
		},
	}
}

// allSymbols is an NVML that exports every function.
func allSymbols() nvml.ExtendedInterface {
	return &mock.ExtendedInterface{LookupSymbolFunc: func(string) error { return nil }}
}

func fakeLib(devs ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		ExtensionsFunc:                 allSymbols,
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "550.54.15", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12040, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devs[i], nvml.SUCCESS
		},
		EventSetCreateFunc: func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED },
	}
}

func snapshot(t *testing.T, lib nvml.Interface, sysfs string) State {
	t.Helper()
	b := newNVML(lib, Options{SysfsRoot: sysfs})
	t.Cleanup(func() { b.Close() })
	return b.Snapshot(context.Background())
}

func TestNVMLReadsEverything(t *testing.T) {
	st := snapshot(t, fakeLib(fakeDevice()), t.TempDir())
	want := State{Source: "nvml", Driver: "550.54.15", CUDADriver: "12.4", Devices: []Device{healthyDevice()}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("state\n got %s\nwant %s", dump(st), dump(want))
	}
}

func TestNVMLInitFailureCallsNothingElse(t *testing.T) {
	for _, ret := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION, nvml.ERROR_LIB_RM_VERSION_MISMATCH} {
		t.Run(errorString(nvmlReturn(ret)), func(t *testing.T) {
			lib := &mock.Interface{InitFunc: func() nvml.Return { return ret }}
			failAllFuncs(t, lib) // Shutdown, Extensions, everything else
			b := newNVML(lib, Options{})
			st := b.Snapshot(context.Background())
			want := "NVML could not start: " + errorString(nvmlReturn(ret))
			if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
				want = "the NVML library (libnvidia-ml.so.1) was not found"
			}
			if st.HasDriver() || st.Source != "none" || st.Error != want {
				t.Errorf("state = %+v", st)
			}
			if err := b.Close(); err != nil {
				t.Error(err)
			}
			if n := len(lib.InitCalls()); n != 1 {
				t.Errorf("Init called %d times", n)
			}
		})
	}
}

// TestNVMLEveryCallFailing breaks one call at a time: exactly that field is
// missing, the error names it, and everything else is still read.
func TestNVMLEveryCallFailing(t *testing.T) {
	const bad = nvml.ERROR_UNKNOWN
	onDevice := func(f func(d *Device)) func(*State) { return func(s *State) { f(&s.Devices[0]) } }
	dropPID := func(pid int) func(*State) {
		return onDevice(func(d *Device) {
			d.Processes = slicesDelete(d.Processes, func(p Process) bool { return p.PID == pid })
		})
	}
	tests := []struct {
		what    string
		breakIt func(*mock.Interface, *mock.Device)
		missing func(*State)
	}{
		{"driver version",
			func(l *mock.Interface, _ *mock.Device) {
				l.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", bad }
			},
			func(s *State) { s.Driver = "unknown" }},
		{"CUDA driver version",
			func(l *mock.Interface, _ *mock.Device) {
				l.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, bad }
			},
			func(s *State) { s.CUDADriver = "" }},
		{"device count",
			func(l *mock.Interface, _ *mock.Device) {
				l.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, bad }
			},
			func(s *State) { s.Devices = []Device{} }},
		{"handle",
			func(l *mock.Interface, _ *mock.Device) {
				l.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
			},
			func(s *State) { s.Devices[0] = Device{Name: "GPU 0", Processes: []Process{}, Lost: true} }},
		{"pci info",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, bad }
			},
			onDevice(func(d *Device) { d.PCIBusID = "" })},
		{"name",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetNameFunc = func() (string, nvml.Return) { return "", bad }
			},
			onDevice(func(d *Device) { d.Name = "GPU 0" })},
		{"uuid",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetUUIDFunc = func() (string, nvml.Return) { return "", bad }
			},
			onDevice(func(d *Device) { d.UUID = "" })},
		{"compute capability",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetCudaComputeCapabilityFunc = func() (int, int, nvml.Return) { return 0, 0, bad }
			},
			onDevice(func(d *Device) { d.ComputeCapability = "" })},
		{"memory",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, bad }
			},
			onDevice(func(d *Device) { d.MemoryTotalBytes, d.MemoryUsedBytes = 0, 0 })},
		{"utilization",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, bad }
			},
			onDevice(func(d *Device) { d.UtilizationGPU, d.UtilizationMemory = nil, nil })},
		{"temperature",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, bad }
			},
			onDevice(func(d *Device) { d.TemperatureC = nil })},
		{"power",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, bad }
			},
			onDevice(func(d *Device) { d.PowerWatts = nil })},
		{"power limit",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, bad }
			},
			onDevice(func(d *Device) { d.PowerLimitWatts = nil })},
		{"MIG mode",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, bad }
			},
			onDevice(func(d *Device) { d.MIGEnabled = false })},
		{"compute processes",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, bad }
			},
			func(s *State) {
				dropPID(200)(s)
				p := &s.Devices[0].Processes[0] // 100 is now known from the graphics list only
				p.Type, p.GPUInstanceID, p.ComputeInstanceID = "graphics", nil, nil
			}},
		{"graphics processes",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, bad }
			},
			dropPID(300)},
		{"mps processes",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, bad }
			},
			dropPID(400)},
		{"process utilization",
			func(_ *mock.Interface, d *mock.Device) {
				d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, bad }
			},
			onDevice(func(d *Device) {
				for i := range d.Processes {
					d.Processes[i].SMPercent, d.Processes[i].MemPercent = nil, nil
				}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			dev := fakeDevice()
			lib := fakeLib(dev)
			tt.breakIt(lib, dev)
			got := snapshot(t, lib, t.TempDir())

			errText := got.Error
			got.Error = ""
			for i := range got.Devices {
				errText += " | " + got.Devices[i].Error
				got.Devices[i].Error = ""
			}
			if !strings.Contains(errText, tt.what+": ") {
				t.Errorf("errors %q do not name %q", errText, tt.what)
			}
			want := State{Source: "nvml", Driver: "550.54.15", CUDADriver: "12.4", Devices: []Device{healthyDevice()}}
			tt.missing(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("state\n got %s\nwant %s", dump(got), dump(want))
			}
		})
	}
}

// TestNVMLLostDeviceDoesNotHideOthers: a device without a handle is listed
// with its error and the next device is read.
func TestNVMLLostDeviceDoesNotHideOthers(t *testing.T) {
	good := fakeDevice()
	lib := fakeLib(nil, good)
	lib.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 0 {
			return nil, nvml.ERROR_GPU_IS_LOST
		}
		return good, nvml.SUCCESS
	}
	st := snapshot(t, lib, t.TempDir())
	if len(st.Devices) != 2 || st.Devices[0].Error != "handle: the GPU has fallen off the bus" || st.Devices[0].Name != "GPU 0" {
		t.Fatalf("devices = %s", dump(st.Devices))
	}
	want := healthyDevice()
	want.Index = 1
	if !reflect.DeepEqual(st.Devices[1], want) {
		t.Errorf("second device\n got %s\nwant %s", dump(st.Devices[1]), dump(want))
	}
}

func TestNVMLNotSupportedIsNil(t *testing.T) {
	const ns = nvml.ERROR_NOT_SUPPORTED
	dev := fakeDevice()
	dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, ns }
	dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, ns }
	dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, ns }
	dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, ns }
	dev.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, ns }
	dev.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, ns }
	dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, ns }
	d := snapshot(t, fakeLib(dev), t.TempDir()).Devices[0]
	if d.Error != "" || d.UtilizationGPU != nil || d.TemperatureC != nil || d.PowerWatts != nil || d.PowerLimitWatts != nil || d.MIGEnabled {
		t.Errorf("device = %s", dump(d))
	}
	if len(d.Processes) != 3 {
		t.Fatalf("processes = %s", dump(d.Processes))
	}
	for _, p := range d.Processes {
		if p.SMPercent != nil || p.MemPercent != nil {
			t.Errorf("process %d has utilization %s", p.PID, dump(p))
		}
	}
	if d.Processes[1].UsedMemoryBytes != nil {
		t.Errorf("memory n/a read as %d", *d.Processes[1].UsedMemoryBytes)
	}
}

func TestNVMLIdleGPUIsZeroPercent(t *testing.T) {
	dev := fakeDevice()
	var asked []uint64
	dev.GetProcessUtilizationFunc = func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		asked = append(asked, since)
		if len(asked) == 1 {
			return []nvml.ProcessUtilizationSample{{Pid: 100, TimeStamp: 7000, SmUtil: 50}}, nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	b := newNVML(fakeLib(dev), Options{SysfsRoot: t.TempDir()})
	defer b.Close()
	first := b.Snapshot(context.Background())
	second := b.Snapshot(context.Background())
	third := b.Snapshot(context.Background())
	if p := first.Devices[0].Processes[0]; *p.SMPercent != 50 {
		t.Errorf("first = %s", dump(p))
	}
	for _, st := range []State{second, third} {
		p := st.Devices[0].Processes[0]
		if p.SMPercent == nil || *p.SMPercent != 0 || st.Devices[0].Error != "" {
			t.Errorf("idle GPU: %s, error %q", dump(p), st.Devices[0].Error)
		}
	}
	if want := []uint64{0, 7000, 7000}; !reflect.DeepEqual(asked, want) {
		t.Errorf("last-seen timestamps asked: %v, want %v", asked, want)
	}
}

// TestNVMLProcessUtilizationSizing covers what go-nvml leaves to the
// caller: samples arriving between its sizing and reading calls.
func TestNVMLProcessUtilizationSizing(t *testing.T) {
	sample := []nvml.ProcessUtilizationSample{{Pid: 100, TimeStamp: 9000, SmUtil: 77, MemUtil: 12}}
	tests := []struct {
		name      string
		answers   []func() ([]nvml.ProcessUtilizationSample, nvml.Return)
		wantSM    *uint32
		wantErr   string
		wantCalls int
	}{
		{"grew between calls, then read",
			[]func() ([]nvml.ProcessUtilizationSample, nvml.Return){
				func() ([]nvml.ProcessUtilizationSample, nvml.Return) { return sample, nvml.ERROR_INSUFFICIENT_SIZE },
				func() ([]nvml.ProcessUtilizationSample, nvml.Return) { return sample, nvml.SUCCESS },
			}, ptr(uint32(77)), "", 2},
		{"go-nvml sliced past its buffer",
			[]func() ([]nvml.ProcessUtilizationSample, nvml.Return){
				func() ([]nvml.ProcessUtilizationSample, nvml.Return) { panic("slice bounds out of range") },
				func() ([]nvml.ProcessUtilizationSample, nvml.Return) { return sample, nvml.SUCCESS },
			}, ptr(uint32(77)), "", 2},
		{"zero samples reported as insufficient size",
			[]func() ([]nvml.ProcessUtilizationSample, nvml.Return){
				func() ([]nvml.ProcessUtilizationSample, nvml.Return) {
					return []nvml.ProcessUtilizationSample{}, nvml.ERROR_INSUFFICIENT_SIZE
				},
			}, ptr(uint32(0)), "", 1},
		{"always growing",
			[]func() ([]nvml.ProcessUtilizationSample, nvml.Return){
				func() ([]nvml.ProcessUtilizationSample, nvml.Return) { return sample, nvml.ERROR_INSUFFICIENT_SIZE },
			}, nil, "process utilization: insufficient size", processUtilizationTries},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := fakeDevice()
			calls := 0
			dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
				answer := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				return answer()
			}
			d := snapshot(t, fakeLib(dev), t.TempDir()).Devices[0]
			if sm := d.Processes[0].SMPercent; !reflect.DeepEqual(sm, tt.wantSM) {
				t.Errorf("SM %% = %s, want %s", dump(sm), dump(tt.wantSM))
			}
			if d.Error != tt.wantErr || calls != tt.wantCalls {
				t.Errorf("error %q after %d calls, want %q after %d", d.Error, calls, tt.wantErr, tt.wantCalls)
			}
		})
	}
}

func TestNVMLSleepingGPUIsNotWoken(t *testing.T) {
	sys := t.TempDir()
	for bus, status := range map[string]string{"0000:07:00.0": "active", "0000:0a:00.0": "suspended"} {
		dir := filepath.Join(sys, "bus", "pci", "devices", bus, "power")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "runtime_status"), []byte(status+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	awake := fakeDevice()
	asleep := &mock.Device{
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busBytes("00000000:0A:00.0")}, nvml.SUCCESS
		},
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA GeForce RTX 4060 Laptop GPU", nvml.SUCCESS },
		GetUUIDFunc: func() (string, nvml.Return) { return "GPU-bbbb", nvml.SUCCESS },
	}
	failAllFuncs(t, asleep) // any other query on the sleeping GPU fails the test
	st := snapshot(t, fakeLib(awake, asleep), sys)
	if len(st.Devices) != 2 || st.Error != "" {
		t.Fatalf("state = %s", dump(st))
	}
	if want := healthyDevice(); !reflect.DeepEqual(st.Devices[0], want) {
		t.Errorf("awake device\n got %s\nwant %s", dump(st.Devices[0]), dump(want))
	}
	want := Device{Index: 1, Name: "NVIDIA GeForce RTX 4060 Laptop GPU", UUID: "GPU-bbbb", PCIBusID: "0000:0a:00.0", Asleep: true, Processes: []Process{}}
	if !reflect.DeepEqual(st.Devices[1], want) {
		t.Errorf("sleeping device\n got %s\nwant %s", dump(st.Devices[1]), dump(want))
	}
}

func TestNVMLDGXA100(t *testing.T) {
	server := dgxa100.New()
	for _, d := range server.Devices {
		dev := d.(*dgxa100.Device)
		// The dgxa100 mock leaves these out (its PCI info has no bus id).
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busBytes("0000" + strings.ToUpper(dev.PciBusID))}, nvml.SUCCESS
		}
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 40, nvml.SUCCESS }
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 90000, nvml.SUCCESS }
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400000, nvml.SUCCESS }
		noHealth(&dev.Device)
		for _, f := range []*func() ([]nvml.ProcessInfo, nvml.Return){&dev.GetComputeRunningProcessesFunc, &dev.GetGraphicsRunningProcessesFunc, &dev.GetMPSComputeRunningProcessesFunc} {
			*f = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		}
	}
	server.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	st := snapshot(t, server, t.TempDir())
	if len(st.Devices) != 8 || st.Driver != server.DriverVersion || st.CUDADriver != "12.4" || st.Error != "" {
		t.Fatalf("state = %s", dump(st))
	}
	uuids := map[string]bool{}
	for i, d := range st.Devices {
		src := server.Devices[i].(*dgxa100.Device)
		if d.Index != i || d.Name != src.Name || d.UUID != src.UUID || d.PCIBusID != src.PciBusID || d.ComputeCapability != "8.0" ||
			d.MemoryTotalBytes != src.MemoryInfo.Total || d.Error != "" || *d.PowerWatts != 90 || d.UtilizationGPU != nil || d.Asleep {
			t.Errorf("device %d = %s", i, dump(d))
		}
		uuids[d.UUID] = true
	}
	if len(uuids) != 8 {
		t.Errorf("UUIDs are not distinct: %v", uuids)
	}
}

// TestOldDriverLacksNewerFunctions: a function the driver's NVML lacks is
// never called (the call would kill the process), and the rest is read.
func TestOldDriverLacksNewerFunctions(t *testing.T) {
	dev := fakeDevice()
	dev.GetMPSComputeRunningProcessesFunc, dev.GetMigModeFunc, dev.GetProcessUtilizationFunc, dev.GetEnforcedPowerLimitFunc = nil, nil, nil, nil
	failAllFuncs(t, dev)
	lib := fakeLib(dev)
	lib.SystemGetCudaDriverVersionFunc = nil
	failAllFuncs(t, lib)
	lib.ExtensionsFunc = func() nvml.ExtendedInterface {
		return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
			if s == symEnforcedPowerLimit {
				return nil
			}
			return errors.New("symbol not found")
		}}
	}
	dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 300000, nvml.SUCCESS }
	st := snapshot(t, lib, t.TempDir())
	d := st.Devices[0]
	if st.CUDADriver != "" || !strings.Contains(st.Error, "CUDA driver version: function not found") {
		t.Errorf("state = %s", dump(st))
	}
	if d.Error != "" || d.Name == "" || len(d.Processes) != 3 || d.Processes[0].SMPercent != nil || d.MIGEnabled || *d.PowerLimitWatts != 300 {
		t.Errorf("device = %s", dump(d))
	}
}

func TestNVMLCloseShutsDownOnce(t *testing.T) {
	lib := fakeLib(fakeDevice())
	b := newNVML(lib, Options{SysfsRoot: t.TempDir()})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(lib.ShutdownCalls()); n != 1 {
		t.Errorf("Shutdown called %d times", n)
	}
	if st := b.Snapshot(context.Background()); st.Error == "" || len(st.Devices) != 0 {
		t.Errorf("snapshot after Close = %s", dump(st))
	}
}

func TestNVMLCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := newNVML(fakeLib(fakeDevice()), Options{SysfsRoot: t.TempDir()})
	defer b.Close()
	st := b.Snapshot(ctx)
	if len(st.Devices) != 0 || !strings.Contains(st.Error, "context canceled") {
		t.Errorf("state = %s", dump(st))
	}
}

func TestCUDAVersion(t *testing.T) {
	for v, want := range map[int]string{12040: "12.4", 12090: "12.9", 11080: "11.8", 13000: "13.0", 12010: "12.1"} {
		if got := cudaVersion(v); got != want {
			t.Errorf("cudaVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestNVMLProcessDedup(t *testing.T) {
	info := func(pid uint32, mem uint64) nvml.ProcessInfo {
		return nvml.ProcessInfo{Pid: pid, UsedGpuMemory: mem, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}
	}
	tests := []struct {
		name                   string
		compute, graphics, mps []nvml.ProcessInfo
		want                   []Process
	}{
		{"compute wins over graphics", []nvml.ProcessInfo{info(1, 10)}, []nvml.ProcessInfo{info(1, 10)}, nil,
			[]Process{{PID: 1, Type: "compute", UsedMemoryBytes: ptr(uint64(10))}}},
		{"graphics wins over mps", nil, []nvml.ProcessInfo{info(2, 20)}, []nvml.ProcessInfo{info(2, 20)},
			[]Process{{PID: 2, Type: "graphics", UsedMemoryBytes: ptr(uint64(20))}}},
		{"memory n/a in one list is taken from another", []nvml.ProcessInfo{info(3, notAvailable)}, []nvml.ProcessInfo{info(3, 30)}, nil,
			[]Process{{PID: 3, Type: "compute", UsedMemoryBytes: ptr(uint64(30))}}},
		{"memory n/a everywhere stays nil", []nvml.ProcessInfo{info(4, notAvailable)}, []nvml.ProcessInfo{info(4, notAvailable)}, nil,
			[]Process{{PID: 4, Type: "compute"}}},
		{"distinct PIDs keep their order", []nvml.ProcessInfo{info(9, 1), info(5, 1)}, []nvml.ProcessInfo{info(7, 1)}, []nvml.ProcessInfo{info(6, 1)},
			[]Process{{PID: 9, Type: "compute", UsedMemoryBytes: ptr(uint64(1))}, {PID: 5, Type: "compute", UsedMemoryBytes: ptr(uint64(1))},
				{PID: 7, Type: "graphics", UsedMemoryBytes: ptr(uint64(1))}, {PID: 6, Type: "mps", UsedMemoryBytes: ptr(uint64(1))}}},
		{"no processes", nil, nil, nil, []Process{}},
	}
	list := func(l []nvml.ProcessInfo) func() ([]nvml.ProcessInfo, nvml.Return) {
		return func() ([]nvml.ProcessInfo, nvml.Return) { return l, nvml.SUCCESS }
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := fakeDevice()
			dev.GetComputeRunningProcessesFunc = list(tt.compute)
			dev.GetGraphicsRunningProcessesFunc = list(tt.graphics)
			dev.GetMPSComputeRunningProcessesFunc = list(tt.mps)
			dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
				return nil, nvml.ERROR_NOT_SUPPORTED
			}
			d := snapshot(t, fakeLib(dev), t.TempDir()).Devices[0]
			if !reflect.DeepEqual(d.Processes, tt.want) {
				t.Errorf("processes\n got %s\nwant %s", dump(d.Processes), dump(tt.want))
			}
		})
	}
}

// newNVML initialises lib on a machine that is not WSL2.
func newNVML(lib nvml.Interface, o Options) Backend { return newNVMLAt(lib, o, nvmlPlace{}) }
