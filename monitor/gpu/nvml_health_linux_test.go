//go:build linux && cgo

package gpu

import (
	"context"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// noHealth makes d answer every health call NOT_SUPPORTED, as a GeForce
// on an old driver would.
func noHealth(d *mock.Device) *mock.Device {
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetFieldValuesFunc = func([]nvml.FieldValue) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	d.GetMarginTemperatureFunc = func() (nvml.MarginTemperature, nvml.Return) {
		return nvml.MarginTemperature{}, nvml.ERROR_NOT_SUPPORTED
	}
	d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED }
	return d
}

// fieldValue is an unsigned long long field as NVML fills it.
func fieldValue(v *nvml.FieldValue, n uint64) {
	v.ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
	binary.LittleEndian.PutUint64(v.Value[:], n)
}

// throttledDevice is fakeDevice held back by heat on a link that trained
// down to Gen3 x8, with a row remap pending: every health call answers.
func throttledDevice() *mock.Device {
	d := fakeDevice()
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
		return nvml.ClocksEventReasonSwPowerCap | nvml.ClocksThrottleReasonHwThermalSlowdown | 0x200, nvml.SUCCESS // 0x200: display clock, unnamed
	}
	d.GetFieldValuesFunc = func(vals []nvml.FieldValue) nvml.Return {
		for i := range vals {
			switch vals[i].FieldId {
			case nvml.FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN:
				fieldValue(&vals[i], 1_000)
			case nvml.FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN:
				fieldValue(&vals[i], 7_000_000_000)
			case nvml.FI_DEV_PCIE_REPLAY_COUNTER:
				fieldValue(&vals[i], 12)
			default:
				vals[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			}
		}
		return nvml.SUCCESS
	}
	d.GetMarginTemperatureFunc = func() (nvml.MarginTemperature, nvml.Return) {
		return nvml.MarginTemperature{MarginTemperature: 2}, nvml.SUCCESS
	}
	d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 4, nvml.SUCCESS }
	d.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
	d.GetGpuMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 4, nvml.SUCCESS }
	d.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return 3, nvml.SUCCESS }
	d.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return 8, nvml.SUCCESS }
	d.GetTotalEccErrorsFunc = func(typ nvml.MemoryErrorType, counter nvml.EccCounterType) (uint64, nvml.Return) {
		if typ != nvml.MEMORY_ERROR_TYPE_UNCORRECTED || counter != nvml.VOLATILE_ECC {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		return 0, nvml.SUCCESS
	}
	d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_DISABLED, nvml.SUCCESS }
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS }
	return d
}

func TestNVMLReadsHealth(t *testing.T) {
	st := snapshot(t, fakeLib(throttledDevice()), t.TempDir())
	d := st.Devices[0]
	if d.Error != "" || d.Lost {
		t.Fatalf("device = %s", dump(d))
	}
	if want := []string{ReasonSWPowerCap, ReasonHWThermalSlowdown}; !reflect.DeepEqual(d.ClocksEventReasons, want) {
		t.Errorf("reasons = %v, want %v", d.ClocksEventReasons, want)
	}
	if want := (&Throttle{SWThermal: ptr(uint64(1000)), HWThermal: ptr(uint64(7e9))}); !reflect.DeepEqual(d.Throttle, want) {
		t.Errorf("throttle = %s, want %s", dump(d.Throttle), dump(want))
	}
	if d.MarginTemperatureC == nil || *d.MarginTemperatureC != 2 {
		t.Errorf("margin = %v", d.MarginTemperatureC)
	}
	if want := (&PCIe{Gen: 3, Width: 8, MaxGen: 4, MaxWidth: 16, CardMaxGen: 4, Replays: ptr(uint64(12))}); !reflect.DeepEqual(d.PCIe, want) {
		t.Errorf("pcie = %s, want %s", dump(d.PCIe), dump(want))
	}
	if want := (&ECC{VolatileDBE: ptr(uint64(0)), RetiredPending: ptr(false), RemapPending: ptr(true), RemapFailure: ptr(false)}); !reflect.DeepEqual(d.ECC, want) {
		t.Errorf("ecc = %s, want %s", dump(d.ECC), dump(want))
	}
}

// TestNVMLHealthNotSupportedAskedOnce: a GeForce answers NOT_SUPPORTED for
// ECC and the counters; that is no error, and no call is made again at
// the next snapshot.
func TestNVMLHealthNotSupportedAskedOnce(t *testing.T) {
	dev := fakeDevice()
	b := newNVML(fakeLib(dev), Options{SysfsRoot: t.TempDir()})
	t.Cleanup(func() { b.Close() })
	for range 3 {
		st := b.Snapshot(context.Background())
		d := st.Devices[0]
		if d.Error != "" || d.ClocksEventReasons != nil || d.Throttle != nil || d.PCIe != nil || d.ECC != nil || d.MarginTemperatureC != nil {
			t.Fatalf("device = %s", dump(d))
		}
	}
	for name, n := range map[string]int{
		"GetCurrentClocksEventReasons": len(dev.GetCurrentClocksEventReasonsCalls()),
		"GetFieldValues":               len(dev.GetFieldValuesCalls()),
		"GetMarginTemperature":         len(dev.GetMarginTemperatureCalls()),
		"GetMaxPcieLinkGeneration":     len(dev.GetMaxPcieLinkGenerationCalls()),
		"GetTotalEccErrors":            len(dev.GetTotalEccErrorsCalls()),
		"GetRetiredPagesPendingStatus": len(dev.GetRetiredPagesPendingStatusCalls()),
		"GetRemappedRows":              len(dev.GetRemappedRowsCalls()),
	} {
		if n != 1 {
			t.Errorf("%s was called %d times in 3 snapshots, want once", name, n)
		}
	}
}

// TestNVMLLostGPU: a GPU that has fallen off the bus answers GPU_IS_LOST;
// the device is marked lost and its health is not asked.
func TestNVMLLostGPU(t *testing.T) {
	for _, ret := range []nvml.Return{nvml.ERROR_GPU_IS_LOST, nvml.ERROR_RESET_REQUIRED} {
		t.Run(errorString(nvmlReturn(ret)), func(t *testing.T) {
			dev := &mock.Device{
				GetPciInfoFunc:                    func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, ret },
				GetNameFunc:                       func() (string, nvml.Return) { return "", ret },
				GetUUIDFunc:                       func() (string, nvml.Return) { return "", ret },
				GetMemoryInfoFunc:                 func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, ret },
				GetCudaComputeCapabilityFunc:      func() (int, int, nvml.Return) { return 0, 0, ret },
				GetUtilizationRatesFunc:           func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, ret },
				GetTemperatureFunc:                func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, ret },
				GetPowerUsageFunc:                 func() (uint32, nvml.Return) { return 0, ret },
				GetEnforcedPowerLimitFunc:         func() (uint32, nvml.Return) { return 0, ret },
				GetMigModeFunc:                    func() (int, int, nvml.Return) { return 0, 0, ret },
				GetComputeRunningProcessesFunc:    func() ([]nvml.ProcessInfo, nvml.Return) { return nil, ret },
				GetGraphicsRunningProcessesFunc:   func() ([]nvml.ProcessInfo, nvml.Return) { return nil, ret },
				GetMPSComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, ret },
			}
			failAllFuncs(t, dev) // no health call on a lost GPU
			st := snapshot(t, fakeLib(dev), t.TempDir())
			d := st.Devices[0]
			if !d.Lost || !strings.Contains(d.Error, errorString(nvmlReturn(ret))) {
				t.Errorf("device = %s", dump(d))
			}
		})
	}
}

// TestNVMLXidEvents: Xid events are drained at each snapshot without
// waiting, each given once, on the device that raised it.
func TestNVMLXidEvents(t *testing.T) {
	gpu0, gpu1 := fakeDevice(), fakeDevice()
	for _, d := range []*mock.Device{gpu0, gpu1} {
		d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError, nvml.SUCCESS
		}
		d.RegisterEventsFunc = func(mask uint64, _ nvml.EventSet) nvml.Return {
			if mask != nvml.EventTypeXidCriticalError {
				t.Errorf("registered for %#x", mask)
			}
			return nvml.SUCCESS
		}
	}
	var queue []nvml.EventData
	set := &mock.EventSet{
		WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
			if ms != 0 {
				t.Errorf("Wait(%d): a snapshot must not wait", ms)
			}
			if len(queue) == 0 {
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
			e := queue[0]
			queue = queue[1:]
			return e, nvml.SUCCESS
		},
		FreeFunc: func() nvml.Return { return nvml.SUCCESS },
	}
	lib := fakeLib(gpu0, gpu1)
	lib.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return set, nvml.SUCCESS }
	b := newNVML(lib, Options{SysfsRoot: t.TempDir()})
	t.Cleanup(func() { b.Close() })

	queue = []nvml.EventData{
		{Device: gpu1, EventType: nvml.EventTypeXidCriticalError, EventData: 79},
		{Device: gpu0, EventType: nvml.EventTypeXidCriticalError, EventData: 13},
	}
	st := b.Snapshot(context.Background())
	if got := [][]Xid{st.Devices[0].Xids, st.Devices[1].Xids}; !reflect.DeepEqual(got, [][]Xid{{{Xid: 13}}, {{Xid: 79}}}) {
		t.Errorf("xids = %v", got)
	}
	st = b.Snapshot(context.Background())
	if st.Devices[0].Xids != nil || st.Devices[1].Xids != nil {
		t.Errorf("the same events again: %v %v", st.Devices[0].Xids, st.Devices[1].Xids)
	}
	if n := len(lib.EventSetCreateCalls()); n != 1 {
		t.Errorf("EventSetCreate called %d times", n)
	}
	if n := len(gpu0.RegisterEventsCalls()); n != 1 {
		t.Errorf("RegisterEvents called %d times", n)
	}
}
