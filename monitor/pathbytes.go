package monitor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// A path on Linux may hold any byte but NUL and '/'; a JSON string holds
// only Unicode, and encoding/json writes each byte that is not UTF-8 as
// U+FFFD, after which the path no longer names its folder. Every JSON of
// an environment path (check --json, watch --json, ps --json, the report,
// the link between the tray and its windows) goes through the three
// types below, so each carries, only for such a path, a sibling field
// with the exact bytes in standard base64: "path_bytes" beside an
// environment's "path", "env_bytes" beside an event's or a process's
// "env". Reading the JSON back restores the exact path from it.

// MarshalJSON writes the report, with path_bytes when the path is not
// UTF-8.
func (e EnvReport) MarshalJSON() ([]byte, error) {
	type plain EnvReport
	b, err := json.Marshal(plain(e))
	if err != nil || e.Env == nil {
		return b, err
	}
	return withExactBytes(b, "path_bytes", e.Path), nil
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
	return withExactBytes(b, "env_bytes", e.Env), nil
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

// withExactBytes adds "key": base64(path) as the first field of the JSON
// object obj when path is not UTF-8; otherwise obj is returned as it is.
func withExactBytes(obj []byte, key, path string) []byte {
	if utf8.ValidString(path) || len(obj) < 2 || obj[0] != '{' {
		return obj
	}
	var b bytes.Buffer
	b.Grow(len(obj) + len(key) + base64.StdEncoding.EncodedLen(len(path)) + 8)
	b.WriteString(`{"` + key + `":"` + base64.StdEncoding.EncodeToString([]byte(path)) + `"`)
	if rest := obj[1:]; !bytes.Equal(rest, []byte("}")) {
		b.WriteByte(',')
	}
	b.Write(obj[1:])
	return b.Bytes()
}
