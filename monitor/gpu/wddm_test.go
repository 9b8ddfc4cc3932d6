package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestParseGPUCounterInstance(t *testing.T) {
	tests := []struct {
		name string
		want gpuCounterInstance
		ok   bool
	}{
		{"pid_1234_luid_0x00000000_0x0000D1B8_phys_0", gpuCounterInstance{pid: 1234, luid: "0x00000000_0x0000D1B8"}, true},
		{"pid_1234_luid_0x00000000_0x0000D1B8_phys_0_eng_3_engtype_Compute_0",
			gpuCounterInstance{pid: 1234, luid: "0x00000000_0x0000D1B8", engType: "Compute_0"}, true},
		{"pid_7_luid_0x00000001_0x00010A2F_phys_1_eng_0_engtype_Cuda", gpuCounterInstance{pid: 7, luid: "0x00000001_0x00010A2F", engType: "Cuda"}, true},
		{"pid_7_luid_0x00000001_0x00010A2F_phys_0_eng_1_engtype_VideoDecode", gpuCounterInstance{pid: 7, luid: "0x00000001_0x00010A2F", engType: "VideoDecode"}, true},
		{"_Total", gpuCounterInstance{}, false},
		{"pid_x_luid_0x0_0x1_phys_0", gpuCounterInstance{}, false},
		{"pid_-3_luid_0x0_0x1_phys_0", gpuCounterInstance{}, false},
		{"pid_12_luid_phys_0", gpuCounterInstance{}, false},
		{"pid_12", gpuCounterInstance{}, false},
		{"", gpuCounterInstance{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseGPUCounterInstance(tt.name)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseLUID(t *testing.T) {
	tests := []struct {
		in   string
		high int32
		low  uint32
		ok   bool
	}{
		{"0x00000000_0x0000D1B8", 0, 0xD1B8, true},
		{"0xFFFFFFFF_0x80000001", -1, 0x80000001, true},
		{"0x00000000", 0, 0, false},
		{"0xZZ_0x1", 0, 0, false},
		{"0x100000000_0x1", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			h, l, ok := parseLUID(tt.in)
			if h != tt.high || l != tt.low || ok != tt.ok {
				t.Errorf("got %d %#x %v; want %d %#x %v", h, l, ok, tt.high, tt.low, tt.ok)
			}
		})
	}
}

func TestBusDeviceFunction(t *testing.T) {
	for in, want := range map[string]string{
		"0000:01:00.0":     "01:00.0",
		"0000:0a:00.1":     "0a:00.1",
		"00010000:41:00.0": "41:00.0",
		"0000:0A:1f.7":     "0a:1f.7",
		"":                 "",
		"garbage":          "",
		"0000:zz:00.0":     "",
	} {
		t.Run(in, func(t *testing.T) {
			if got := busDeviceFunction(in); got != want {
				t.Errorf("busDeviceFunction(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestCollectUse(t *testing.T) {
	const nv, igpu = "0x00000000_0x0000D1B8", "0x00000000_0x0000A001"
	adapters := map[string]string{nv: "01:00.0"} // the iGPU's address is unknown
	memory := []counterValue{
		{"pid_10_luid_" + nv + "_phys_0", 4 << 30},
		{"pid_10_luid_" + nv + "_phys_1", 1 << 30}, // a linked adapter's second GPU adds up
		{"pid_10_luid_" + igpu + "_phys_0", 64 << 20},
		{"pid_11_luid_" + nv + "_phys_0", 0},
		{"_Total", 99},
		{"pid_12_luid_" + nv + "_phys_0", -1}, // nonsense is skipped
	}
	shared := []counterValue{
		{"pid_10_luid_" + nv + "_phys_0", 1536 << 20},
		{"pid_10_luid_" + nv + "_phys_1", 512 << 20},
		{"pid_14_luid_" + nv + "_phys_0", 7},                  // only shared memory
		{"pid_15_luid_" + nv + "_phys_0_eng_0_engtype_3D", 5}, // an engine's name is not a memory instance
	}
	engines := []counterValue{
		{"pid_10_luid_" + nv + "_phys_0_eng_0_engtype_3D", 99}, // not compute
		{"pid_10_luid_" + nv + "_phys_0_eng_3_engtype_Compute_0", 40},
		{"pid_10_luid_" + nv + "_phys_0_eng_4_engtype_Compute_1", 72.5},
		{"pid_10_luid_" + nv + "_phys_0_eng_5_engtype_Cuda", 12},
		{"pid_13_luid_" + nv + "_phys_0_eng_5_engtype_Cuda", 3}, // only an engine
	}
	got := collectUse(memory, shared, engines, func(l string) string { return adapters[l] })
	want := []processUse{
		{pid: 10, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(5 << 30)), sharedBytes: ptr(uint64(2 << 30)), computePercent: ptr(72.5)},
		{pid: 10, luid: igpu, dedicatedBytes: ptr(uint64(64 << 20))},
		{pid: 11, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(0))},
		{pid: 14, luid: nv, adapter: "01:00.0", sharedBytes: ptr(uint64(7))},
		{pid: 13, luid: nv, adapter: "01:00.0", computePercent: ptr(3.0)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uses\n got %s\nwant %s", dumpUses(got), dumpUses(want))
	}
	if got := collectUse(memory[:1], nil, nil, func(string) string { return "" }); got[0].computePercent != nil {
		t.Errorf("no engine reading yet (a rate needs two) gave %v %%", *got[0].computePercent)
	}
}

func dumpUses(us []processUse) string {
	var b strings.Builder
	for _, u := range us {
		fmt.Fprintf(&b, "{pid %d luid %s adapter %q mem %s shared %s cpu %s} ", u.pid, u.luid, u.adapter, dump(u.dedicatedBytes), dump(u.sharedBytes), dump(u.computePercent))
	}
	return b.String()
}

func TestFillProcessUse(t *testing.T) {
	const nv, igpu, nv2 = "0x0_0x1", "0x0_0x2", "0x0_0x3"
	proc := func(pid int, mem *uint64, sm *uint32) Process {
		return Process{PID: pid, Type: "compute", UsedMemoryBytes: mem, SMPercent: sm}
	}
	dev := func(bus string, ps ...Process) Device { return Device{PCIBusID: bus, Processes: ps} }
	tests := []struct {
		name string
		devs []Device
		uses []processUse
		want []Device
	}{
		{"fills n/a memory and utilization from the device's adapter",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))},
			[]processUse{{pid: 10, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(5 << 30)), computePercent: ptr(49.5)}},
			[]Device{dev("0000:01:00.0", proc(10, ptr(uint64(5<<30)), ptr(uint32(50))))}},
		{"shared memory from the counters, summed over a linked adapter's GPUs",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))},
			[]processUse{{pid: 10, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(1)), sharedBytes: ptr(uint64(600 << 20))},
				{pid: 10, luid: nv2, adapter: "01:00.0", sharedBytes: ptr(uint64(100 << 20))}},
			[]Device{dev("0000:01:00.0", Process{PID: 10, Type: "compute", UsedMemoryBytes: ptr(uint64(1)), SharedMemoryBytes: ptr(uint64(700 << 20))})}},
		{"keeps what NVML said",
			[]Device{dev("0000:01:00.0", proc(10, ptr(uint64(7)), ptr(uint32(3))))},
			[]processUse{{pid: 10, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(5 << 30)), computePercent: ptr(49.5)}},
			[]Device{dev("0000:01:00.0", proc(10, ptr(uint64(7)), ptr(uint32(3))))}},
		{"another adapter's use is not this device's",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))},
			[]processUse{{pid: 10, luid: igpu, adapter: "00:02.0", dedicatedBytes: ptr(uint64(1)), computePercent: ptr(9.0)}},
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))}},
		{"two GPUs each get their own",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil)), dev("0000:02:00.0", proc(10, nil, nil))},
			[]processUse{
				{pid: 10, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(1 << 30))},
				{pid: 10, luid: nv2, adapter: "02:00.0", dedicatedBytes: ptr(uint64(2 << 30))},
			},
			[]Device{dev("0000:01:00.0", proc(10, ptr(uint64(1<<30)), nil)), dev("0000:02:00.0", proc(10, ptr(uint64(2<<30)), nil))}},
		{"unknown address, one GPU, one adapter: unambiguous",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))},
			[]processUse{{pid: 10, luid: nv, dedicatedBytes: ptr(uint64(3)), computePercent: ptr(150.0)}},
			[]Device{dev("0000:01:00.0", proc(10, ptr(uint64(3)), ptr(uint32(100))))}},
		{"unknown address, two adapters: left n/a",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))},
			[]processUse{{pid: 10, luid: nv, dedicatedBytes: ptr(uint64(3))}, {pid: 11, luid: igpu, dedicatedBytes: ptr(uint64(4))}},
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))}},
		{"a process the counters do not know stays n/a",
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))},
			[]processUse{{pid: 11, luid: nv, adapter: "01:00.0", dedicatedBytes: ptr(uint64(3))}},
			[]Device{dev("0000:01:00.0", proc(10, nil, nil))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fillProcessUse(tt.devs, tt.uses)
			if !reflect.DeepEqual(tt.devs, tt.want) {
				t.Errorf("devices\n got %s\nwant %s", dump(tt.devs), dump(tt.want))
			}
		})
	}
}

// fakeLibrary is an NVML with one device whose processes have no memory
// or utilization, as under WDDM.
type fakeLibrary struct{ shutdowns int }

func (*fakeLibrary) driverVersion() (string, nvmlReturn)  { return "566.36", retSuccess }
func (*fakeLibrary) cudaDriverVersion() (int, nvmlReturn) { return 12070, retSuccess }
func (*fakeLibrary) deviceCount() (int, nvmlReturn)       { return 1, retSuccess }
func (*fakeLibrary) device(int) (nvmlDevice, nvmlReturn)  { return fakeWDDMDevice{}, retSuccess }
func (f *fakeLibrary) shutdown() nvmlReturn               { f.shutdowns++; return retSuccess }

type fakeWDDMDevice struct{}

func (fakeWDDMDevice) pciBusID() (string, nvmlReturn)            { return "00000000:01:00.0", retSuccess }
func (fakeWDDMDevice) name() (string, nvmlReturn)                { return "NVIDIA GeForce RTX 4090", retSuccess }
func (fakeWDDMDevice) uuid() (string, nvmlReturn)                { return "GPU-4090", retSuccess }
func (fakeWDDMDevice) computeCapability() (int, int, nvmlReturn) { return 8, 9, retSuccess }
func (fakeWDDMDevice) memory() (uint64, uint64, nvmlReturn)      { return 24 << 30, 6 << 30, retSuccess }
func (fakeWDDMDevice) utilization() (uint32, uint32, nvmlReturn) { return 0, 0, retNotSupported }
func (fakeWDDMDevice) temperature() (uint32, nvmlReturn)         { return 0, retNotSupported }
func (fakeWDDMDevice) powerUsage() (uint32, nvmlReturn)          { return 0, retNotSupported }
func (fakeWDDMDevice) enforcedPowerLimit() (uint32, nvmlReturn)  { return 0, retFunctionNotFound }
func (fakeWDDMDevice) migEnabled() (bool, nvmlReturn)            { return false, retNotSupported }
func (fakeWDDMDevice) processUtilization(uint64) ([]utilizationSample, nvmlReturn) {
	return nil, retNotSupported
}
func (fakeWDDMDevice) processes(l processList) ([]processInfo, nvmlReturn) {
	if l != listCompute {
		return nil, retSuccess
	}
	return []processInfo{{pid: 10, usedMemory: notAvailable, gpuInstance: noInstance, computeInstance: noInstance}}, retSuccess
}

// countersStub answers read with uses or err, counting reads and closes.
type countersStub struct {
	uses          []processUse
	err           error
	reads, closes int
}

func (c *countersStub) read(context.Context) ([]processUse, error) { c.reads++; return c.uses, c.err }
func (c *countersStub) close()                                     { c.closes++ }

func TestBackendCounters(t *testing.T) {
	tests := []struct {
		name      string
		counters  *countersStub
		wantMem   *uint64
		wantReads int
		wantLog   int // how often "stay n/a" is logged
	}{
		{"counters fill in", &countersStub{uses: []processUse{{pid: 10, luid: "0x0_0x1", adapter: "01:00.0", dedicatedBytes: ptr(uint64(42))}}},
			ptr(uint64(42)), 3, 0},
		{"counters missing: said once, asked once", &countersStub{err: fmt.Errorf("adding a counter: %w", errNoCounters)}, nil, 1, 1},
		{"a failing read is tried again", &countersStub{err: errors.New("collecting: PDH status 0x800007D5")}, nil, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			lib := &fakeLibrary{}
			b := newNVMLBackend(lib, nvmlConfig{log: slog.New(slog.NewTextHandler(&logs, nil)), counters: tt.counters})
			for range 3 {
				st := b.Snapshot(context.Background())
				if p := st.Devices[0].Processes[0]; !reflect.DeepEqual(p.UsedMemoryBytes, tt.wantMem) || st.Error != "" || st.Devices[0].Error != "" {
					t.Errorf("state = %s", dump(st))
				}
			}
			if tt.counters.reads != tt.wantReads {
				t.Errorf("counters read %d times, want %d", tt.counters.reads, tt.wantReads)
			}
			if n := strings.Count(logs.String(), "stay n/a"); n != tt.wantLog {
				t.Errorf("said %d times that the counters are missing:\n%s", n, logs.String())
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if tt.counters.closes != 1 || lib.shutdowns != 1 {
				t.Errorf("closed %d, shut down %d times", tt.counters.closes, lib.shutdowns)
			}
		})
	}
}

// TestBackendSkipsCountersWhenNVMLSaysAll: where every process has memory
// and utilization (Linux, TCC), the counters are not read.
func TestBackendSkipsCountersWhenNVMLSaysAll(t *testing.T) {
	devs := []Device{{Processes: []Process{{PID: 1, UsedMemoryBytes: ptr(uint64(1)), SMPercent: ptr(uint32(2))}}}, {Asleep: true, Processes: []Process{}}}
	if lacksUse(devs) {
		t.Error("lacksUse with every figure there")
	}
	devs[0].Processes = append(devs[0].Processes, Process{PID: 2, UsedMemoryBytes: ptr(uint64(1))})
	if !lacksUse(devs) {
		t.Error("lacksUse missed a process without utilization")
	}
}
