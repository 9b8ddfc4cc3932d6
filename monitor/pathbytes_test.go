package monitor

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestPathsThatAreNotUTF8KeepTheirBytes: such a path is written lossy in
// its string field and exact in a base64 sibling, and read back exact;
// any other path is written as before, with no sibling.
func TestPathsThatAreNotUTF8KeepTheirBytes(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		sibling    bool
	}{
		{"not UTF-8", "/srv/caf\xe9/.venv", true},
		{"UTF-8", "/srv/café/.venv", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := State{
				Envs:      []EnvReport{{Env: &pyenv.Env{Path: tc.path, Python: "3.11"}, Via: "argument", Verdict: VerdictNoTorch, Findings: []finding.Finding{}}},
				Processes: []Process{{Row: procs.Row{Proc: procs.Proc{PID: 7, EnvPath: tc.path}}, Findings: []finding.Finding{}}},
			}
			ev := Event{Kind: KindEnvAdded, Env: tc.path, Message: "m"}
			for name, v := range map[string]any{"state": st, "event": ev} {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(b) {
					t.Fatalf("%s: invalid JSON %s", name, b)
				}
				has := strings.Contains(string(b), `"path_bytes":`) || strings.Contains(string(b), `"env_bytes":`)
				if has != tc.sibling {
					t.Errorf("%s: sibling written %v, want %v: %s", name, has, tc.sibling, b)
				}
			}
			b, _ := json.Marshal(st)
			var back State
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Envs[0].Path != tc.path || back.Envs[0].Via != "argument" || back.Envs[0].Python != "3.11" || back.Envs[0].Verdict != VerdictNoTorch {
				t.Errorf("env read back as %+v (%q)", back.Envs[0], back.Envs[0].Path)
			}
			if back.Processes[0].EnvPath != tc.path || back.Processes[0].PID != 7 {
				t.Errorf("process read back as %+v", back.Processes[0])
			}
			b, _ = json.Marshal(ev)
			var evBack Event
			if err := json.Unmarshal(b, &evBack); err != nil || evBack.Env != tc.path || evBack.Kind != KindEnvAdded || evBack.Message != "m" {
				t.Errorf("event read back as %+v, %v", evBack, err)
			}
		})
	}
}

// TestPlainJSONUnchanged: for UTF-8 paths the JSON is the types' own,
// field for field, so check --json's shape does not move.
func TestPlainJSONUnchanged(t *testing.T) {
	e := EnvReport{Env: &pyenv.Env{Path: "/a"}, Via: "home", Verdict: VerdictOK, Findings: []finding.Finding{}}
	type plain EnvReport
	got, _ := json.Marshal(e)
	want, _ := json.Marshal(plain(e))
	if string(got) != string(want) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestFindingsKeepTheirEnvBytes: a finding's env that is not UTF-8 gets
// its env_bytes sibling wherever the finding is written (an
// environment's findings, the machine's, a process's, an event's) and is
// read back exact, so its Key matches its environment's again.
func TestFindingsKeepTheirEnvBytes(t *testing.T) {
	const path = "/srv/caf\xe9/.venv"
	f := finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError, Message: "m", Env: path}
	st := State{
		Envs:      []EnvReport{{Env: &pyenv.Env{Path: path}, Verdict: VerdictError, Findings: []finding.Finding{f}}},
		Findings:  []finding.Finding{f},
		Processes: []Process{{Row: procs.Row{Proc: procs.Proc{PID: 7, EnvPath: path}}, Findings: []finding.Finding{f}}},
	}
	ev := Event{Kind: KindFindingRaised, Env: path, Message: "m", Finding: &f}
	var doc struct {
		Envs []struct {
			Findings []map[string]any `json:"findings"`
		} `json:"envs"`
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Envs[0].Findings[0]["env_bytes"]; got != base64.StdEncoding.EncodeToString([]byte(path)) {
		t.Errorf("envs[].findings[].env_bytes = %v in %s", got, b)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, got := range []finding.Finding{back.Envs[0].Findings[0], back.Findings[0], back.Processes[0].Findings[0]} {
		if got.Env != path || got.Key() != f.Key() || got.Code != f.Code {
			t.Errorf("finding read back as %+v (%q)", got, got.Env)
		}
	}
	b, _ = json.Marshal(ev)
	var evBack Event
	if err := json.Unmarshal(b, &evBack); err != nil || evBack.Finding == nil || evBack.Finding.Env != path {
		t.Errorf("event's finding read back as %+v, %v: %s", evBack.Finding, err, b)
	}
	plain := f
	plain.Env = "/srv/café/.venv"
	if b, _ := json.Marshal(plain); strings.Contains(string(b), "env_bytes") {
		t.Errorf("a UTF-8 env got env_bytes: %s", b)
	}
}
