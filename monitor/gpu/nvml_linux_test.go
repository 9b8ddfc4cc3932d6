//go:build linux && cgo

package gpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// fakeDevice is a healthy A100 with two processes; tests break one call.
func fakeDevice() *mock.Device {
	return &mock.Device{
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
		GetMigModeFunc:            func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_DISABLE, 0, nvml.SUCCESS },
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{
				{Pid: 100, UsedGpuMemory: 2 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF},
				{Pid: 200, UsedGpuMemory: notAvailable, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF},
			}, nvml.SUCCESS
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			// 100 is also a graphics process: one entry, type compute.
			return []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 2 << 30, GpuInstanceId: 0xFFFFFFFF}}, nvml.SUCCESS
		},
		GetMPSComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED },
		GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return []nvml.ProcessUtilizationSample{{Pid: 100, TimeStamp: 5000, SmUtil: 91, MemUtil: 30}}, nvml.SUCCESS
		},
	}
}

// allSymbols is an NVML with every function.
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
	}
}

func TestNVMLReadsEverything(t *testing.T) {
	b := newNVML(fakeLib(fakeDevice()), Options{SysfsRoot: t.TempDir()})
	defer b.Close()
	st := b.Snapshot(context.Background())
	if st.Error != "" || st.Simulated || st.Source != "nvml" || st.Driver != "550.54.15" || st.CUDADriver != "12.4" {
		t.Fatalf("state = %+v", st)
	}
	if len(st.Devices) != 1 {
		t.Fatalf("devices = %+v", st.Devices)
	}
	d := st.Devices[0]
	if d.Name != "NVIDIA A100-SXM4-40GB" || d.UUID != "GPU-aaaa" || d.PCIBusID != "0000:07:00.0" || d.ComputeCapability != "8.0" ||
		d.MemoryTotalBytes != 40<<30 || d.MemoryUsedBytes != 3<<30 || *d.UtilizationGPU != 87 || *d.TemperatureC != 61 ||
		*d.PowerWatts != 250.5 || *d.PowerLimitWatts != 400 || d.MIGEnabled || d.Error != "" {
		t.Errorf("device = %+v", d)
	}
	if len(d.Processes) != 2 {
		t.Fatalf("processes = %+v", d.Processes)
	}
	p0, p1 := d.Processes[0], d.Processes[1]
	if p0.PID != 100 || p0.Type != "compute" || *p0.UsedMemoryBytes != 2<<30 || *p0.SMPercent != 91 || *p0.MemPercent != 30 || p0.GPUInstanceID != nil {
		t.Errorf("process 100 = %+v", p0)
	}
	if p1.PID != 200 || p1.UsedMemoryBytes != nil || *p1.SMPercent != 0 {
		t.Errorf("process 200 (memory n/a, no samples) = %+v", p1)
	}
}

func TestNVMLInitFailureCallsNothingElse(t *testing.T) {
	for _, ret := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION} {
		t.Run(errorString(ret), func(t *testing.T) {
			// Every other function is nil: the mock panics if one is called.
			lib := &mock.Interface{InitFunc: func() nvml.Return { return ret }}
			b := newNVML(lib, Options{})
			st := b.Snapshot(context.Background())
			if st.HasDriver() || st.Error == "" || st.Source != "none" {
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

func TestRealNVMLWithoutDriverIsNoDriverState(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA driver")
	}
	b := Open(Options{})
	defer b.Close()
	st := b.Snapshot(context.Background())
	if st.HasDriver() || st.Error == "" {
		t.Errorf("state without a driver = %+v", st)
	}
}

// TestNVMLEveryCallFailing breaks one call at a time: the field is missing,
// the error is recorded, and everything else is still read.
func TestNVMLEveryCallFailing(t *testing.T) {
	fail := nvml.ERROR_UNKNOWN
	breakers := map[string]func(*mock.Interface, *mock.Device){
		"driver version": func(l *mock.Interface, _ *mock.Device) {
			l.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", fail }
		},
		"CUDA driver version": func(l *mock.Interface, _ *mock.Device) {
			l.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, fail }
		},
		"device count": func(l *mock.Interface, _ *mock.Device) {
			l.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, fail }
		},
		"handle": func(l *mock.Interface, _ *mock.Device) {
			l.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
		},
		"name": func(_ *mock.Interface, d *mock.Device) {
			d.GetNameFunc = func() (string, nvml.Return) { return "", fail }
		},
		"uuid": func(_ *mock.Interface, d *mock.Device) {
			d.GetUUIDFunc = func() (string, nvml.Return) { return "", fail }
		},
		"pci info": func(_ *mock.Interface, d *mock.Device) {
			d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, fail }
		},
		"compute capability": func(_ *mock.Interface, d *mock.Device) {
			d.GetCudaComputeCapabilityFunc = func() (int, int, nvml.Return) { return 0, 0, fail }
		},
		"memory": func(_ *mock.Interface, d *mock.Device) {
			d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, fail }
		},
		"utilization": func(_ *mock.Interface, d *mock.Device) {
			d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, fail }
		},
		"temperature": func(_ *mock.Interface, d *mock.Device) {
			d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, fail }
		},
		"power": func(_ *mock.Interface, d *mock.Device) {
			d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, fail }
		},
		"power limit": func(_ *mock.Interface, d *mock.Device) {
			d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, fail }
		},
		"MIG mode": func(_ *mock.Interface, d *mock.Device) {
			d.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, fail }
		},
		"compute processes": func(_ *mock.Interface, d *mock.Device) {
			d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, fail }
		},
		"graphics processes": func(_ *mock.Interface, d *mock.Device) {
			d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, fail }
		},
		"mps processes": func(_ *mock.Interface, d *mock.Device) {
			d.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, fail }
		},
		"process utilization": func(_ *mock.Interface, d *mock.Device) {
			d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, fail }
		},
	}
	for what, breakIt := range breakers {
		t.Run(what, func(t *testing.T) {
			dev := fakeDevice()
			lib := fakeLib(dev)
			breakIt(lib, dev)
			b := newNVML(lib, Options{SysfsRoot: t.TempDir()})
			st := b.Snapshot(context.Background())
			all := st.Error
			for _, d := range st.Devices {
				all += " | " + d.Error
			}
			if !strings.Contains(all, what+": ") {
				t.Fatalf("error %q does not name %q", all, what)
			}
			if what == "device count" {
				if len(st.Devices) != 0 || st.Driver == "" {
					t.Errorf("state = %+v", st)
				}
				return
			}
			if len(st.Devices) != 1 || st.Devices[0].Name == "" {
				t.Fatalf("the device was dropped: %+v", st.Devices)
			}
			d := st.Devices[0]
			if what != "handle" && what != "memory" && d.MemoryTotalBytes == 0 {
				t.Errorf("memory was not read after %s failed", what)
			}
			if what != "handle" && what != "compute processes" && !strings.Contains(what, "utilization") && len(d.Processes) == 0 {
				t.Errorf("processes were not read after %s failed", what)
			}
		})
	}
}

func TestNVMLNotSupportedIsNotAnError(t *testing.T) {
	dev := fakeDevice()
	dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	st := newNVML(fakeLib(dev), Options{SysfsRoot: t.TempDir()}).Snapshot(context.Background())
	d := st.Devices[0]
	if d.Error != "" || d.UtilizationGPU != nil || d.TemperatureC != nil || d.Processes[0].SMPercent != nil {
		t.Errorf("device = %+v, process = %+v", d, d.Processes[0])
	}
}

func TestNVMLIdleGPUIsZeroPercent(t *testing.T) {
	dev := fakeDevice()
	var asked []uint64
	calls := 0
	dev.GetProcessUtilizationFunc = func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		asked = append(asked, since)
		calls++
		if calls == 1 {
			return []nvml.ProcessUtilizationSample{{Pid: 100, TimeStamp: 7000, SmUtil: 50}}, nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	b := newNVML(fakeLib(dev), Options{SysfsRoot: t.TempDir()})
	first := b.Snapshot(context.Background())
	second := b.Snapshot(context.Background())
	if *first.Devices[0].Processes[0].SMPercent != 50 {
		t.Errorf("first = %+v", first.Devices[0].Processes[0])
	}
	p := second.Devices[0].Processes[0]
	if p.SMPercent == nil || *p.SMPercent != 0 || second.Devices[0].Error != "" {
		t.Errorf("idle GPU: %+v, error %q", p, second.Devices[0].Error)
	}
	if len(asked) != 2 || asked[0] != 0 || asked[1] != 7000 {
		t.Errorf("last-seen timestamps asked: %v", asked)
	}
}

func TestNVMLMIGInstances(t *testing.T) {
	dev := fakeDevice()
	dev.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS }
	dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 300, UsedGpuMemory: 1 << 30, GpuInstanceId: 1, ComputeInstanceId: 0}}, nvml.SUCCESS
	}
	st := newNVML(fakeLib(dev), Options{SysfsRoot: t.TempDir()}).Snapshot(context.Background())
	d := st.Devices[0]
	if !d.MIGEnabled {
		t.Error("MIG mode not read")
	}
	var p300 *Process
	for i := range d.Processes {
		if d.Processes[i].PID == 300 {
			p300 = &d.Processes[i]
		}
	}
	if p300 == nil || p300.GPUInstanceID == nil || *p300.GPUInstanceID != 1 || *p300.ComputeInstanceID != 0 {
		t.Errorf("MIG process = %+v", p300)
	}
}

func TestNVMLSleepingGPUIsNotWoken(t *testing.T) {
	sys := t.TempDir()
	mk := func(bus, status string) {
		dir := filepath.Join(sys, "bus", "pci", "devices", bus)
		os.MkdirAll(filepath.Join(dir, "power"), 0o755)
		os.WriteFile(filepath.Join(dir, "vendor"), []byte("0x10de\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "class"), []byte("0x030200\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "power", "runtime_status"), []byte(status+"\n"), 0o644)
	}
	mk("0000:07:00.0", "active")
	mk("0000:0a:00.0", "suspended")
	awake := fakeDevice()
	lib := fakeLib(awake, &mock.Device{}) // any call on the second device panics
	lib.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 {
			t.Fatal("the sleeping GPU was asked for its handle")
		}
		return awake, nvml.SUCCESS
	}
	st := newNVML(lib, Options{SysfsRoot: sys}).Snapshot(context.Background())
	if len(st.Devices) != 2 {
		t.Fatalf("devices = %+v", st.Devices)
	}
	if st.Devices[0].Asleep || st.Devices[0].Name != "NVIDIA A100-SXM4-40GB" {
		t.Errorf("awake device = %+v", st.Devices[0])
	}
	if !st.Devices[1].Asleep || st.Devices[1].PCIBusID != "0000:0a:00.0" {
		t.Errorf("sleeping device = %+v", st.Devices[1])
	}
}

func TestNVMLDGXA100(t *testing.T) {
	server := dgxa100.New()
	for _, d := range server.Devices {
		dev := d.(*dgxa100.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 40, nvml.SUCCESS }
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 90000, nvml.SUCCESS }
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400000, nvml.SUCCESS }
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		dev.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		dev.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	}
	b := newNVML(server, Options{SysfsRoot: t.TempDir()})
	defer b.Close()
	st := b.Snapshot(context.Background())
	if len(st.Devices) != 8 || st.Driver == "" || st.CUDADriver == "" {
		t.Fatalf("state = %+v", st)
	}
	for _, d := range st.Devices {
		if d.Name != "Mock NVIDIA A100-SXM4-40GB" || d.ComputeCapability != "8.0" || d.MemoryTotalBytes == 0 || d.UUID == "" || d.Error != "" {
			t.Errorf("device %d = %+v", d.Index, d)
		}
	}
}

// TestOldDriverLacksNewerFunctions: a function the driver's NVML lacks is
// never called (the call would crash the process), and the rest is read.
func TestOldDriverLacksNewerFunctions(t *testing.T) {
	dev := fakeDevice()
	dev.GetMPSComputeRunningProcessesFunc = nil // the mock panics if called
	dev.GetMigModeFunc = nil
	dev.GetProcessUtilizationFunc = nil
	lib := fakeLib(dev)
	lib.ExtensionsFunc = func() nvml.ExtendedInterface {
		return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
			switch s {
			case "nvmlDeviceGetMPSComputeRunningProcesses", "nvmlDeviceGetMigMode", "nvmlDeviceGetProcessUtilization":
				return fmt.Errorf("symbol %s not found", s)
			}
			return nil
		}}
	}
	st := newNVML(lib, Options{SysfsRoot: t.TempDir()}).Snapshot(context.Background())
	d := st.Devices[0]
	if d.Error != "" || d.Name == "" || len(d.Processes) != 2 || d.Processes[0].SMPercent != nil {
		t.Errorf("device = %+v", d)
	}
}

func TestBusID(t *testing.T) {
	for in, want := range map[string]string{"00000000:07:00.0": "0000:07:00.0", "00000001:0A:00.0": "0001:0a:00.0", "0000:07:00.0": "0000:07:00.0"} {
		b := busBytes(in)
		if got := busID(b[:]); got != want {
			t.Errorf("busID(%q) = %q, want %q", in, got, want)
		}
	}
}
