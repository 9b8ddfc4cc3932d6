package gpu

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestScenarioHealth: the scenario's health keys read into the device as
// NVML's would.
func TestScenarioHealth(t *testing.T) {
	st, err := ParseScenario([]byte(`{"driver": "550.54.15", "devices": [{"name": "NVIDIA RTX A6000",
		"clocks_event_reasons": ["sw_power_cap", "hw_thermal_slowdown"],
		"throttle_ns": {"hw_thermal": 5000000000, "hw_slowdown": 7},
		"margin_temperature_c": 2,
		"pcie": {"gen": 1, "width": 16, "max_gen": 4, "max_width": 16, "replays": 3},
		"ecc": {"volatile_dbe": 2, "remap_pending": true},
		"xid_events": [{"xid": 79}]},
		{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-lost", "utilization_gpu_percent": 99, "lost": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := st.Devices[0]
	want := Device{Name: "NVIDIA RTX A6000", Processes: []Process{},
		ClocksEventReasons: []string{ReasonSWPowerCap, ReasonHWThermalSlowdown},
		Throttle:           &Throttle{HWThermal: ptr(uint64(5e9)), HWSlowdown: ptr(uint64(7))},
		MarginTemperatureC: ptr(int32(2)),
		PCIe:               &PCIe{Gen: 1, Width: 16, MaxGen: 4, MaxWidth: 16, Replays: ptr(uint64(3))},
		ECC:                &ECC{VolatileDBE: ptr(uint64(2)), RemapPending: ptr(true)},
		Xids:               []Xid{{Xid: 79}}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("device\n got %s\nwant %s", dump(d), dump(want))
	}
	lost := st.Devices[1]
	if wantLost := (Device{Index: 1, Name: "NVIDIA GeForce RTX 4090", UUID: "GPU-lost", Processes: []Process{}, Lost: true,
		Error: "the GPU has fallen off the bus"}); !reflect.DeepEqual(lost, wantLost) {
		t.Errorf("lost device\n got %s\nwant %s", dump(lost), dump(wantLost))
	}
}

func TestScenarioHealthRejects(t *testing.T) {
	dev := func(fields string) string {
		return `{"driver": "550.54.15", "devices": [{"name": "NVIDIA A100-SXM4-40GB", ` + fields + `}]}`
	}
	for _, tt := range []struct{ name, data, says string }{
		{"unknown reason", dev(`"clocks_event_reasons": ["hot"]`), `clocks_event_reasons: "hot" is not one of gpu_idle`},
		{"unknown throttle key", dev(`"throttle_ns": {"thermal": 1}`), `unknown field "thermal"`},
		{"pcie gen 9", dev(`"pcie": {"gen": 9, "width": 16, "max_gen": 4, "max_width": 16}`), "pcie: gen 9 is out of range"},
		{"pcie without max", dev(`"pcie": {"gen": 4, "width": 16}`), "max_gen and max_width are all needed"},
		{"margin", dev(`"margin_temperature_c": 900`), "margin_temperature_c 900 is out of range"},
		{"ecc key", dev(`"ecc": {"dbe": 1}`), `unknown field "dbe"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want it to say %q", err, tt.says)
			}
		})
	}
}

// TestSimXidsOnce: an xid_events entry is reported at the first snapshot
// after it appears and not again; a rewrite that adds one reports only it.
func TestSimXidsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.json")
	at := time.Now()
	write := func(xids string) {
		at = at.Add(time.Second)
		writeScenario(t, path, `{"driver": "550.54.15", "devices": [{"name": "NVIDIA A100-SXM4-40GB", "xid_events": [`+xids+`]}]}`, at)
	}
	b := newSim(path)
	xids := func() []Xid { return b.Snapshot(context.Background()).Devices[0].Xids }
	write(`{"xid": 79}`)
	if got := xids(); !reflect.DeepEqual(got, []Xid{{Xid: 79}}) {
		t.Errorf("first snapshot: %v", got)
	}
	if got := xids(); got != nil {
		t.Errorf("unchanged file: %v again", got)
	}
	write(`{"xid": 79}, {"xid": 48}`)
	if got := xids(); !reflect.DeepEqual(got, []Xid{{Xid: 48}}) {
		t.Errorf("after a rewrite: %v, want only the new 48", got)
	}
	at = at.Add(time.Second)
	writeScenario(t, path, `{"driver": "550.54.15", "devices": [{"name": "NVIDIA A100-SXM4-40GB", "lost": true, "xid_events": [{"xid": 79}, {"xid": 48}]}]}`, at)
	if got := xids(); got != nil {
		t.Errorf("a lost GPU: %v", got)
	}
	write(`{"xid": 79}, {"xid": 48}`)
	if got := xids(); got != nil {
		t.Errorf("back from lost: %v again", got)
	}
	write(``)
	if got := xids(); got != nil {
		t.Errorf("an emptied list: %v", got)
	}
	write(`{"xid": 31}`)
	if got := xids(); !reflect.DeepEqual(got, []Xid{{Xid: 31}}) {
		t.Errorf("a shorter list: %v", got)
	}
}

// TestSimSpillAndDriverResets: a process's shared_memory_bytes is its
// SharedMemoryBytes, and a driver_resets entry is reported once, at the
// first snapshot after it appears, with NVIDIA's driver by default.
func TestSimSpillAndDriverResets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.json")
	at := time.Now()
	write := func(resets string) {
		at = at.Add(time.Second)
		writeScenario(t, path, `{"driver": "566.36", "driver_resets": [`+resets+`], "devices": [{"name": "NVIDIA GeForce RTX 4090",
			"memory_total_bytes": 25757220864, "processes": [{"pid": 5120, "used_memory_bytes": null, "shared_memory_bytes": 1610612736}]}]}`, at)
	}
	b := newSim(path)
	write(`{}`)
	st := b.Snapshot(context.Background())
	if p := st.Devices[0].Processes[0]; p.SharedMemoryBytes == nil || *p.SharedMemoryBytes != 1610612736 || p.UsedMemoryBytes != nil {
		t.Errorf("process %s", dump(p))
	}
	if !reflect.DeepEqual(st.DriverResets, []DriverReset{{Driver: "nvlddmkm"}}) {
		t.Errorf("first snapshot: resets %v", st.DriverResets)
	}
	if got := b.Snapshot(context.Background()).DriverResets; got != nil {
		t.Errorf("unchanged file: %v again", got)
	}
	write(`{}, {"driver": "amdkmdag"}`)
	if got := b.Snapshot(context.Background()).DriverResets; !reflect.DeepEqual(got, []DriverReset{{Driver: "amdkmdag"}}) {
		t.Errorf("after a rewrite: %v, want only the new one", got)
	}
	if _, err := ParseScenario([]byte(`{"driver": "566.36", "driver_resets": [{"drivr": "x"}], "devices": []}`)); err == nil {
		t.Error("a misspelt driver_resets key was accepted")
	}
	if _, err := ParseScenario([]byte(`{"driver": "566.36", "devices": [{"name": "x", "processes": [{"pid": 1, "shared_memory_bytes": -1}]}]}`)); err == nil {
		t.Error("a negative shared_memory_bytes was accepted")
	}
}
