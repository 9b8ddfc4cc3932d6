package monitor

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/gpucanary/gpucanary/monitor/pathjson"
)

// Every JSON of an environment path (check --json, watch --json, ps
// --json, the report, the link between the tray and its windows) goes
// through the types below and finding.Finding, so each carries, only for a
// path that is not UTF-8, a sibling field with its exact bytes
// (pathjson): "path_bytes" beside an environment's "path", "env_bytes"
// beside an event's, a process's or a finding's "env". Reading the JSON
// back restores the exact path from it.

// MarshalJSON writes the report, with path_bytes when the path is not
// UTF-8.
func (e EnvReport) MarshalJSON() ([]byte, error) {
	type plain EnvReport
	b, err := json.Marshal(plain(e))
	if err != nil || e.Env == nil {
		return b, err
	}
	return pathjson.WithExactBytes(b, "path_bytes", e.Path), nil
}

// EncodeJSON writes the report's JSON, MarshalJSON's, with enc: a
// check encodes a thousand reports with a few encoders into buffers it
// reuses, instead of a fresh copy from Marshal per report and another
// for its indentation (fresh pages were a tenth of a 20-environment
// check's time).
func (e EnvReport) EncodeJSON(enc *json.Encoder) error {
	if e.Env != nil && !utf8.ValidString(e.Path) {
		b, err := e.MarshalJSON()
		if err != nil {
			return err
		}
		return enc.Encode(json.RawMessage(b))
	}
	type plain EnvReport
	return enc.Encode(plain(e))
}

// UnmarshalJSON reads a report, taking the path from path_bytes when
// given.
func (e *EnvReport) UnmarshalJSON(data []byte) error {
	type plain EnvReport
	aux := struct {
		*plain
		PathBytes []byte `json:"path_bytes"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.PathBytes != nil && e.Env != nil {
		e.Path = string(aux.PathBytes)
	}
	return nil
}

// MarshalJSON writes the event, with env_bytes when its environment's
// path is not UTF-8.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	b, err := json.Marshal(plain(e))
	if err != nil {
		return b, err
	}
	return pathjson.WithExactBytes(b, "env_bytes", e.Env), nil
}

// UnmarshalJSON reads an event, taking its environment's path from
// env_bytes when given.
func (e *Event) UnmarshalJSON(data []byte) error {
	type plain Event
	aux := struct {
		*plain
		EnvBytes []byte `json:"env_bytes"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.EnvBytes != nil {
		e.Env = string(aux.EnvBytes)
	}
	return nil
}

// UnmarshalJSON reads a process, taking its environment's path from
// env_bytes when given.
func (p *Process) UnmarshalJSON(data []byte) error {
	type plain Process
	aux := struct {
		*plain
		EnvBytes []byte `json:"env_bytes"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.EnvBytes != nil {
		p.EnvPath = string(aux.EnvBytes)
	}
	return nil
}
