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
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// CheckWriter writes `check --json` while the environments are read: the
// frame's head (the GPU) first, then each environment as it comes, then
// the frame's tail (the machine's findings, whether the search was
// complete). The bytes are those of one indented encoding of the whole
// CheckResult; what is held in memory is one environment's, not a
// thousand's (the whole document built in memory was most of a large
// check's peak). The first error is kept and returned by End.
type CheckWriter struct {
	w   *bufio.Writer
	n   int
	err error
}

// NewCheckWriter writes to w, buffered; End flushes.
func NewCheckWriter(w io.Writer) *CheckWriter {
	return &CheckWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// envsKey is where the environments go in the indented frame, at the top
// level's indentation only: a nested key is indented further, and a
// string holds no bare quote.
const envsKey = "\n  \"envs\": []"

// frame is r's indented encoding without environments, cut where they go.
func frame(r monitor.CheckResult) (head, tail []byte, err error) {
	r.Envs = []monitor.EnvReport{}
	var b bytes.Buffer
	if err := indented(&b, r); err != nil {
		return nil, nil, err
	}
	head, tail, ok := bytes.Cut(b.Bytes(), []byte(envsKey))
	if !ok {
		return nil, nil, errors.New("encoding the check: no place for the environments in its frame")
	}
	return head, tail, nil
}

// Begin writes the frame's head from r (its GPU; its environments are not
// written here).
func (c *CheckWriter) Begin(r monitor.CheckResult) {
	head, _, err := frame(r)
	if err != nil {
		c.err = err
		return
	}
	c.w.Write(head)
	c.w.WriteString("\n  \"envs\": [")
}

// compactEncoder encodes a report, compact, into its buffer, from which
// the report's indented bytes are made: one per goroutine encoding at
// the time, reused.
type compactEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var (
	compactEncoders = sync.Pool{New: func() any {
		c := &compactEncoder{}
		c.enc = json.NewEncoder(&c.buf)
		return c
	}}
	// envBuffers hold encoded reports until they are written: as many as
	// are read ahead of the writer, reused. Fresh memory per report was a
	// tenth of a 20-environment check's time (docs/performance.md).
	envBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// EncodedEnv is one environment's report encoded by EncodeEnv, for
// WriteEnv.
type EncodedEnv struct{ b *bytes.Buffer }

// EncodeEnv encodes one environment's report as Env writes it: indented
// at its place in the frame. A reader may encode reports on several
// goroutines with it and hand them to WriteEnv in order.
func EncodeEnv(r monitor.EnvReport) (EncodedEnv, error) {
	c := compactEncoders.Get().(*compactEncoder)
	defer compactEncoders.Put(c)
	c.buf.Reset()
	if err := r.EncodeJSON(c.enc); err != nil {
		return EncodedEnv{}, fmt.Errorf("encoding the report on %s: %w", r.Path, err)
	}
	// The report's own encoding, indented: what MarshalIndent writes,
	// without the pass in which it checks and compacts what a
	// json.Marshaler returned (a third pass over a thousand reports).
	out := envBuffers.Get().(*bytes.Buffer)
	out.Reset()
	if err := json.Indent(out, bytes.TrimSuffix(c.buf.Bytes(), []byte("\n")), "    ", "  "); err != nil {
		envBuffers.Put(out)
		return EncodedEnv{}, fmt.Errorf("encoding the report on %s: %w", r.Path, err)
	}
	return EncodedEnv{out}, nil
}

// Env writes one environment's report.
func (c *CheckWriter) Env(r monitor.EnvReport) {
	e, err := EncodeEnv(r)
	if err != nil {
		c.err = cmp.Or(c.err, err)
		return
	}
	c.WriteEnv(e)
}

// WriteEnv writes one environment's report encoded by EncodeEnv, and
// hands its buffer back for the next report.
func (c *CheckWriter) WriteEnv(env EncodedEnv) {
	if env.b == nil {
		return
	}
	defer envBuffers.Put(env.b)
	if c.err != nil {
		return
	}
	if c.n > 0 {
		c.w.WriteString(",")
	}
	c.w.WriteString("\n    ")
	c.w.Write(env.b.Bytes())
	c.n++
}

// End writes the frame's tail from r (its findings, completeness; its
// environments are not written here) and flushes.
func (c *CheckWriter) End(r monitor.CheckResult) error {
	if c.err != nil {
		return c.err
	}
	_, tail, err := frame(r)
	if err != nil {
		return err
	}
	if c.n > 0 {
		c.w.WriteString("\n  ")
	}
	c.w.WriteString("]")
	c.w.Write(tail)
	return c.w.Flush()
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
