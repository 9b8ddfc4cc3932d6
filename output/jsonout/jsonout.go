// Package jsonout writes what commands print for scripts: the JSON shapes
// of DESIGN.md's command-line contract. `check --json` and `ps --json`
// write one indented document; `watch --json` and `ps --watch --json`
// write one object a line as events happen or the table refreshes (JSON
// lines, which a script reads a line at a time). The shapes are the shared types' own JSON (monitor,
// gpu), including the exact bytes of a path that is not UTF-8 (monitor's
// path_bytes and env_bytes): this package decides only how they are
// framed, and adds what only the output needs (`ps --json`'s time and
// host).
//
// It imports the shared types of monitor and gpu; nothing under app/ and
// nothing of cmd.
package jsonout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// Check writes `check --json`: the whole CheckResult, indented. The
// environments are written one at a time, as the encoder would have
// indented them in the whole: a thousand of them were the whole document
// built twice in memory (compact, then indented), most of the peak of a
// check.
func Check(w io.Writer, r monitor.CheckResult) error {
	if len(r.Envs) == 0 {
		return indented(w, r)
	}
	envs := r.Envs
	r.Envs = []monitor.EnvReport{}
	var frame bytes.Buffer
	if err := indented(&frame, r); err != nil {
		return err
	}
	// At the top level's indentation only: a nested key is indented
	// further, and a string holds no bare quote.
	const empty = "\n  \"envs\": []"
	head, tail, ok := bytes.Cut(frame.Bytes(), []byte(empty))
	if !ok {
		r.Envs = envs
		return indented(w, r)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	bw.WriteString("\n  \"envs\": [\n    ")
	for i, e := range envs {
		if i > 0 {
			bw.WriteString(",\n    ")
		}
		b, err := json.MarshalIndent(e, "    ", "  ")
		if err != nil {
			return err
		}
		bw.Write(b)
	}
	bw.WriteString("\n  ]")
	bw.Write(tail)
	return bw.Flush()
}

// processList is `ps --json`'s shape: DESIGN.md's processes plus the GPU,
// and when and where they were read (gpustat's hostname and query_time).
type processList struct {
	Hostname  string            `json:"hostname"`
	QueryTime time.Time         `json:"query_time"`
	GPU       gpu.State         `json:"gpu"`
	Processes []monitor.Process `json:"processes"`
	// Findings are about the machine rather than one process
	// (GPU_MEMORY_ORPHANED); an empty list, never null.
	Findings []finding.Finding `json:"findings"`
}

// Processes writes `ps --json`: the host, the time of the scan, the GPU
// and the rows in the order given, indented; no rows is an empty list,
// never null.
func Processes(w io.Writer, host string, at time.Time, st gpu.State, rows []monitor.Process, findings []finding.Finding) error {
	return indented(w, newProcessList(host, at, st, rows, findings))
}

// ProcessesLine writes one refresh of `ps --watch --json`: Processes'
// object on one line.
func ProcessesLine(w io.Writer, host string, at time.Time, st gpu.State, rows []monitor.Process, findings []finding.Finding) error {
	return json.NewEncoder(w).Encode(newProcessList(host, at, st, rows, findings))
}

func newProcessList(host string, at time.Time, st gpu.State, rows []monitor.Process, findings []finding.Finding) processList {
	if rows == nil {
		rows = []monitor.Process{}
	}
	if findings == nil {
		findings = []finding.Finding{}
	}
	return processList{Hostname: host, QueryTime: at, GPU: st, Processes: rows, Findings: findings}
}

// Event writes one event of `watch --json` as one line.
func Event(w io.Writer, e monitor.Event) error {
	return json.NewEncoder(w).Encode(e)
}

func indented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
