package gpu

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseScenarioFiles(t *testing.T) {
	tests := []struct {
		file string
		want State
	}{
		{"a100.json", State{Simulated: true, Driver: "550.54.15", CUDADriver: "12.4", Devices: []Device{
			{Index: 0, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-0000", ComputeCapability: "8.0",
				MemoryTotalBytes: 42949672960, MemoryUsedBytes: 2147483648, // the processes' sum
				UtilizationGPU: ptr(uint32(87)), TemperatureC: ptr(uint32(61)), PowerWatts: ptr(250.5),
				Processes: []Process{
					{PID: 1234, Type: "compute", UsedMemoryBytes: ptr(uint64(2147483648)), SMPercent: ptr(uint32(87))},
					{PID: 99, Type: "graphics"}, // memory n/a
				}},
			{Index: 1, Name: "NVIDIA GeForce RTX 5090", UUID: "GPU-0001", ComputeCapability: "12.0",
				MemoryTotalBytes: 34359738368, MemoryUsedBytes: 1073741824, Asleep: true, Processes: []Process{}},
		}}},
		{"no-driver.json", State{Simulated: true, Devices: []Device{}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseScenario(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state\n got %s\nwant %s", dump(got), dump(tt.want))
			}
			if got.HasDriver() != (tt.want.Driver != "") {
				t.Errorf("HasDriver() = %v", got.HasDriver())
			}
		})
	}
}

func TestParseScenarioRejects(t *testing.T) {
	tests := map[string]string{
		"empty":             ``,
		"not json":          `{"devices": [`,
		"trailing data":     `{"devices": []} {}`,
		"unknown field":     `{"devices": [], "drivr": "1"}`,
		"devices no driver": `{"devices": [{"name": "x"}]}`,
		"bad pid":           `{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 0}]}]}`,
		"bad type":          `{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 5, "type": "weird"}]}]}`,
		"no name":           `{"driver": "1", "devices": [{}]}`,
		"negative memory":   `{"driver": "1", "devices": [{"name": "x", "memory_total_bytes": -1}]}`,
	}
	for name, bad := range tests {
		t.Run(name, func(t *testing.T) {
			if st, err := ParseScenario([]byte(bad)); err == nil {
				t.Errorf("no error; state = %s", dump(st))
			}
		})
	}
}

// writeScenario writes data at path with modification time at.
func writeScenario(t *testing.T, path, data string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func TestSimReReadsOnChange(t *testing.T) {
	a100, err := os.ReadFile(filepath.Join("testdata", "a100.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gpu.json")
	now := time.Now()
	writeScenario(t, path, string(a100), now)
	b := Open(Options{SimFile: path})
	defer b.Close()
	ctx := context.Background()

	st := b.Snapshot(ctx)
	if st.Source != "sim:"+path || !st.Simulated || st.Error != "" || len(st.Devices[0].Processes) != 2 {
		t.Fatalf("first = %s", dump(st))
	}
	// Callers may change what they get without changing the backend's copy.
	st.Devices[0].Processes[0].PID = 1
	if again := b.Snapshot(ctx); again.Devices[0].Processes[0].PID != 1234 {
		t.Error("a snapshot shares memory with the backend")
	}

	// The job leaves the GPU.
	gone := strings.Replace(string(a100), `{"pid": 1234, "used_memory_bytes": 2147483648, "sm_percent": 87},`, "", 1)
	writeScenario(t, path, gone, now.Add(time.Second))
	if got := b.Snapshot(ctx); len(got.Devices[0].Processes) != 1 || got.Devices[0].Processes[0].PID != 99 || got.Error != "" {
		t.Errorf("after the job left: %s", dump(got))
	}

	// Same size and time: not re-read (the file is only parsed on change).
	same := strings.Replace(gone, `"pid": 99`, `"pid": 77`, 1)
	writeScenario(t, path, same, now.Add(time.Second))
	if got := b.Snapshot(ctx); got.Devices[0].Processes[0].PID != 99 {
		t.Errorf("re-parsed an unchanged file: %s", dump(got.Devices[0].Processes))
	}
	writeScenario(t, path, same, now.Add(2*time.Second))
	if got := b.Snapshot(ctx); got.Devices[0].Processes[0].PID != 77 {
		t.Errorf("missed a change of time only: %s", dump(got.Devices[0].Processes))
	}

	// A broken file is shown, not hidden behind the last good state.
	writeScenario(t, path, `{"devices": [`, now.Add(3*time.Second))
	got := b.Snapshot(ctx)
	if !strings.HasPrefix(got.Error, "reading GPU scenario "+path+": ") || got.HasDriver() || !got.Simulated || got.Source != "sim:"+path {
		t.Errorf("malformed: %s", dump(got))
	}
	// ... and shown again on the next snapshot, from the cache.
	if again := b.Snapshot(ctx); again.Error != got.Error {
		t.Errorf("second snapshot of a malformed file: %s", dump(again))
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := b.Snapshot(ctx); !strings.HasPrefix(got.Error, "reading GPU scenario "+path+": ") || got.HasDriver() || !got.Simulated {
		t.Errorf("missing: %s", dump(got))
	}

	// The file comes back: read again.
	writeScenario(t, path, string(a100), now.Add(4*time.Second))
	if got := b.Snapshot(ctx); got.Error != "" || len(got.Devices) != 2 {
		t.Errorf("restored: %s", dump(got))
	}
}

func TestSimMissingFromTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.json")
	b := Open(Options{SimFile: path})
	defer b.Close()
	st := b.Snapshot(context.Background())
	if !strings.Contains(st.Error, path) || st.HasDriver() || !st.Simulated || st.Devices == nil {
		t.Errorf("state = %s", dump(st))
	}
}

func FuzzParseScenario(f *testing.F) {
	for _, name := range []string{"a100.json", "no-driver.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 5, "used_memory_bytes": null}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseScenario(data)
		if err != nil {
			return
		}
		if !st.Simulated || st.Devices == nil || len(st.Devices) > 0 && !st.HasDriver() {
			t.Fatalf("parsed state = %s", dump(st))
		}
		for i, d := range st.Devices {
			if d.Index != i || d.Name == "" || d.Processes == nil {
				t.Fatalf("bad device %s", dump(d))
			}
			for _, p := range d.Processes {
				if p.PID <= 0 || (p.Type != "compute" && p.Type != "graphics" && p.Type != "mps") {
					t.Fatalf("bad process %s", dump(p))
				}
			}
		}
	})
}
