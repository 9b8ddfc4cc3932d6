package monitor

import (
	"encoding/json"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pathjson"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Process is one row of `gpucanary ps` with the findings about it.
type Process struct {
	procs.Row
	Findings []finding.Finding `json:"findings"`
}

// MarshalJSON writes the row as its fields say, except what was not
// measured (procs.Row.Measured: a PID outside this view): its CPU %, CPU
// time and RSS are null and its start time is left out, rather than 0
// and 0001-01-01, so a script cannot take unknown for idle. Read back,
// they are zero, and OutsideContainer still says why. An environment
// path that is not UTF-8 is also written exactly, as env_bytes
// (pathbytes.go).
func (p Process) MarshalJSON() ([]byte, error) {
	b, err := p.marshalMeasured()
	if err != nil {
		return b, err
	}
	return pathjson.WithExactBytes(b, "env_bytes", p.EnvPath), nil
}

func (p Process) marshalMeasured() ([]byte, error) {
	type plain Process // the fields, without this method
	if p.Measured() {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		plain
		// Shallower than the embedded fields of the same names, so these
		// win.
		StartTime      *time.Time `json:"start_time,omitempty"`
		CPUPercent     *float64   `json:"cpu_percent"`
		CPUTimeSeconds *float64   `json:"cpu_time_seconds"`
		RSSBytes       *uint64    `json:"rss_bytes"`
	}{plain: plain(p)})
}
