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

// TestParseScenarioRejects: a malformed scenario is an error saying what
// is wrong (audit issue 3): encoding/json alone takes null for "no
// driver", matches "Driver" and "NAME" to driver and name, and any string
// as a compute capability.
func TestParseScenarioRejects(t *testing.T) {
	dev := func(fields string) string {
		return `{"driver": "550.54.15", "cuda_driver": "12.4", "devices": [{"name": "NVIDIA A100-SXM4-40GB", ` + fields + `}]}`
	}
	proc := func(fields string) string { return dev(`"processes": [{"pid": 5, ` + fields + `}]`) }
	tests := []struct{ name, data, says string }{
		{"empty", ``, "invalid scenario JSON"},
		{"not json", `{"devices": [`, "invalid scenario JSON"},
		{"trailing data", `{"devices": []} {}`, "data after the object"},
		{"unknown field", `{"devices": [], "drivr": "1"}`, "unknown field"},
		{"devices no driver", `{"devices": [{"name": "x"}]}`, "no driver version"},
		{"bad pid", `{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 0}]}]}`, "pid 0 is not a process ID"},
		{"bad type", `{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 5, "type": "weird"}]}]}`, "not compute, graphics or mps"},
		{"no name", `{"driver": "1", "devices": [{}]}`, "has no name"},
		{"negative memory", `{"driver": "1", "devices": [{"name": "x", "memory_total_bytes": -1}]}`, "invalid scenario JSON"},
		{"null", `null`, "the scenario is null, not a JSON object"},
		{"null after space", " \n null ", "the scenario is null"},
		{"a list", `[]`, "invalid scenario JSON"},
		{"wrong-case top-level key", `{"Driver": "550.54.15", "cuda_driver": "12.4", "devices": []}`, `the scenario: unknown field "Driver" (field names are case-sensitive: "driver")`},
		{"wrong-case device key", `{"driver": "550.54.15", "devices": [{"NAME": "A100", "compute_capability": "8.0"}]}`, `devices[0]: unknown field "NAME" (field names are case-sensitive: "name")`},
		{"wrong-case process key", proc(`"Used_Memory_Bytes": 1`), `devices[0].processes[0]: unknown field "Used_Memory_Bytes"`},
		{"escaped key is still checked", `{"\u0044river": "550.54.15", "devices": []}`, `unknown field "Driver"`},
		{"key given twice", `{"driver": "550.54.15", "driver": "1", "devices": []}`, `"driver" is given twice`},
		{"null driver", `{"driver": null, "devices": []}`, `"driver" is null`},
		{"null devices", `{"driver": "550.54.15", "devices": null}`, `"devices" is null`},
		{"null device", `{"driver": "550.54.15", "devices": [null]}`, "devices[0] is null, not a JSON object"},
		{"null process", dev(`"processes": [null]`), "devices[0].processes[0] is null"},
		{"null name", dev(`"uuid": null`), `"uuid" is null`},
		{"compute capability not a number", dev(`"compute_capability": "banana"`), `compute_capability "banana" is not a compute capability`},
		{"compute capability without a minor", dev(`"compute_capability": "8"`), "not a compute capability"},
		{"compute capability sm_80", dev(`"compute_capability": "sm_80"`), "not a compute capability"},
		{"compute capability 0.0", dev(`"compute_capability": "0.0"`), "not a compute capability"},
		{"driver not a version", `{"driver": "banana", "devices": []}`, `driver "banana" is not an NVIDIA driver version`},
		{"driver with letters", `{"driver": "r535.x1", "devices": []}`, "not an NVIDIA driver version"},
		{"driver with a space", `{"driver": "550.54.15 ", "devices": []}`, "not an NVIDIA driver version"},
		{"cuda_driver not a version", `{"driver": "550.54.15", "cuda_driver": "twelve", "devices": []}`, `cuda_driver "twelve" is not a CUDA version`},
		{"cuda_driver without driver", `{"cuda_driver": "12.4", "devices": []}`, "cuda_driver is given but driver is not"},
		{"utilization over 100", dev(`"utilization_gpu_percent": 101`), "utilization_gpu_percent 101 is out of range"},
		{"memory utilization over 100", dev(`"utilization_memory_percent": 4000000000`), "utilization_memory_percent"},
		{"absurd temperature", dev(`"temperature_c": 4000000000`), "temperature_c"},
		{"negative power", dev(`"power_watts": -5`), "power_watts -5 is out of range"},
		{"absurd power limit", dev(`"power_limit_watts": 1e9`), "power_limit_watts"},
		{"absurd memory", dev(`"memory_total_bytes": 18446744073709551615`), "memory_total_bytes"},
		{"used over total", dev(`"memory_total_bytes": 1000, "memory_used_bytes": 2000`), "memory_used_bytes 2000 is more than memory_total_bytes 1000"},
		{"absurd pid", dev(`"processes": [{"pid": 99999999999}]`), "not a process ID"},
		{"negative pid", dev(`"processes": [{"pid": -4}]`), "pid -4 is not a process ID"},
		{"sm over 100", proc(`"sm_percent": 250`), "sm_percent 250 is out of range"},
		{"absurd process memory", proc(`"used_memory_bytes": 18446744073709551615`), "used_memory_bytes"},
		{"devices not a list", `{"driver": "550.54.15", "devices": {}}`, "invalid scenario JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseScenario([]byte(tt.data))
			if err == nil {
				t.Fatalf("no error; state = %s", dump(st))
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}

// TestParseScenarioAccepts: what a driver does say passes, null included
// where it means "not known".
func TestParseScenarioAccepts(t *testing.T) {
	for _, data := range []string{
		`{}`,
		`{"devices": []}`,
		`{"driver": "580", "devices": []}`,
		`{"driver": "550.54.15", "cuda_driver": "12.10", "devices": [{"name": "x", "compute_capability": "12.0"}]}`,
		"\ufeff{\"driver\": \"580\", \"devices\": []}", // Notepad's byte-order mark (issue 32, L15)
		`{"driver": "1", "devices": [{"name": "x", "compute_capability": "10.3", "memory_used_bytes": null, "temperature_c": null, "power_watts": 0,
		  "utilization_gpu_percent": 100, "processes": [{"pid": 4294967295, "used_memory_bytes": null, "sm_percent": null}]}]}`,
	} {
		if st, err := ParseScenario([]byte(data)); err != nil {
			t.Errorf("%s: %v", data, err)
		} else if !st.Simulated {
			t.Errorf("%s: %s", data, dump(st))
		}
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

	// A file that does not parse (a script caught half-way through
	// rewriting it) keeps the last good reading, and says what is wrong
	// with the file (issue 32, L16: it was "no driver", NO_GPU_DRIVER).
	writeScenario(t, path, `{"devices": [`, now.Add(3*time.Second))
	got := b.Snapshot(ctx)
	if !strings.HasPrefix(got.Error, "reading GPU scenario "+path+": ") || !strings.HasSuffix(got.Error, "; the last good reading is shown") ||
		!got.HasDriver() || got.Devices[0].Processes[0].PID != 77 || !got.Simulated || got.Source != "sim:"+path {
		t.Errorf("malformed: %s", dump(got))
	}
	// ... and shown again on the next snapshot.
	if again := b.Snapshot(ctx); again.Error != got.Error || !again.HasDriver() {
		t.Errorf("second snapshot of a malformed file: %s", dump(again))
	}
	// Written in full: read again, and the error is gone.
	done := strings.Replace(same, `"pid": 77`, `"pid": 55`, 1)
	writeScenario(t, path, done, now.Add(3*time.Second))
	if got := b.Snapshot(ctx); got.Error != "" || got.Devices[0].Processes[0].PID != 55 {
		t.Errorf("written in full: %s", dump(got))
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

// TestSimMalformedFromTheStart: with no good reading yet, a file that
// does not parse is the state's error, with no driver.
func TestSimMalformedFromTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.json")
	writeScenario(t, path, `{"driver": "550`, time.Now())
	b := Open(Options{SimFile: path})
	defer b.Close()
	st := b.Snapshot(context.Background())
	if !strings.HasPrefix(st.Error, "reading GPU scenario "+path+": ") || strings.Contains(st.Error, "last good") || st.HasDriver() || !st.Simulated {
		t.Errorf("state = %s", dump(st))
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
	f.Add([]byte(`{"Driver": "550.54.15", "devices": [{"NAME": "x", "compute_capability": "banana"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseScenario(data)
		if err != nil {
			return
		}
		if !st.Simulated || st.Devices == nil || len(st.Devices) > 0 && !st.HasDriver() {
			t.Fatalf("parsed state = %s", dump(st))
		}
		if st.Driver != "" && !simDriverVersion().MatchString(st.Driver) || st.CUDADriver != "" && (st.Driver == "" || !simCUDAVersion().MatchString(st.CUDADriver)) {
			t.Fatalf("bad driver %s", dump(st))
		}
		for i, d := range st.Devices {
			if d.Index != i || d.Name == "" || d.Processes == nil || d.ComputeCapability != "" && !simComputeCapability().MatchString(d.ComputeCapability) ||
				d.MemoryTotalBytes > maxMemoryBytes || d.UtilizationGPU != nil && *d.UtilizationGPU > maxPercent {
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
