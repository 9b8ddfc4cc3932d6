package finding

import (
	"encoding/json"

	"github.com/gpucanary/gpucanary/monitor/pathjson"
)

// MarshalJSON writes the finding, with env_bytes beside env when the
// environment's path is not UTF-8 (pathjson), as an environment's, an
// event's and a process's JSON carry it: check --json's findings, ps
// --json's, an event's finding.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	b, err := json.Marshal(plain(f))
	if err != nil {
		return b, err
	}
	return pathjson.WithExactBytes(b, "env_bytes", f.Env), nil
}

// UnmarshalJSON reads a finding, taking its environment's path from
// env_bytes when given, so that its Key matches the environment's again
// (the tray's windows read the state this way).
func (f *Finding) UnmarshalJSON(data []byte) error {
	type plain Finding
	aux := struct {
		*plain
		EnvBytes []byte `json:"env_bytes"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.EnvBytes != nil {
		f.Env = string(aux.EnvBytes)
	}
	return nil
}
