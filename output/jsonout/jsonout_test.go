package jsonout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

func TestCheckIsIndentedAndWhole(t *testing.T) {
	r := monitor.CheckResult{GPU: gpu.State{Driver: "550.54.15"}, Envs: []monitor.EnvReport{}, Findings: []finding.Finding{}}
	var b bytes.Buffer
	if err := writeCheck(&b, r); err != nil {
		t.Fatal(err)
	}
	want, _ := json.MarshalIndent(r, "", "  ")
	if b.String() != string(want)+"\n" {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestProcessesNeverNull(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	if err := Processes(&b, "gpu-box-7", at, gpu.State{Driver: "550.54.15"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Hostname  string         `json:"hostname"`
		QueryTime string         `json:"query_time"`
		GPU       map[string]any `json:"gpu"`
		Processes []any          `json:"processes"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Processes == nil || got.GPU["driver"] != "550.54.15" || !strings.Contains(b.String(), `"processes": []`) || !strings.Contains(b.String(), `"findings": []`) {
		t.Errorf("ps --json with no rows:\n%s", b.String())
	}
	// As gpustat's JSON: the host and the time of the query.
	if got.Hostname != "gpu-box-7" || got.QueryTime != "2025-03-01T12:00:00+01:00" {
		t.Errorf("hostname %q, query_time %q", got.Hostname, got.QueryTime)
	}
}

func TestEventsOneALine(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, ev := range []monitor.Event{
		{Time: at, Kind: monitor.KindEnvAdded, Env: "/e", Message: "New environment /e\n(torch 2.5.1)."},
		{Time: at, Kind: monitor.KindCUDAWheelReplaced, Env: "/e", Message: "replaced", Fix: "uv pip install torch", Notify: true},
	} {
		if err := Event(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(&b)
	var kinds []string
	for sc.Scan() {
		var ev monitor.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		kinds = append(kinds, string(ev.Kind))
	}
	if strings.Join(kinds, " ") != "ENV_ADDED CUDA_WHEEL_REPLACED" {
		t.Errorf("lines read back as %v", kinds)
	}
}

// TestProcessesLineIsProcessesOnOneLine: a refresh of ps --watch --json
// is ps --json's object, whole, on one line.
func TestProcessesLineIsProcessesOnOneLine(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var line, doc bytes.Buffer
	for _, w := range []func() error{
		func() error { return ProcessesLine(&line, "gpu-box-7", at, gpu.State{Driver: "550.54.15"}, nil, nil) },
		func() error { return ProcessesLine(&line, "gpu-box-7", at, gpu.State{Driver: "550.54.15"}, nil, nil) },
		func() error { return Processes(&doc, "gpu-box-7", at, gpu.State{Driver: "550.54.15"}, nil, nil) },
	} {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(line.String(), "\n"), "\n")
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Bytes()); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0] != compact.String() || lines[1] != lines[0] {
		t.Errorf("two refreshes wrote %q, want two lines of %s", line.String(), compact.String())
	}
}

// writeCheck writes `check --json`: the whole CheckResult, indented, as one
// encoding of it would (CheckWriter, one environment at a time).
func writeCheck(w io.Writer, r monitor.CheckResult) error {
	if r.Envs == nil {
		return indented(w, r) // "envs": null, as encoded
	}
	c := NewCheckWriter(w)
	c.Begin(r)
	for _, e := range r.Envs {
		c.Env(e)
	}
	return c.End(r)
}
