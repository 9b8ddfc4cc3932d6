package jsonout

import (
	"bytes"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestCheckStreamsTheSameBytes: Check, which writes the environments one
// at a time, writes exactly what one indented encoding of the whole
// result writes, for none, one and several environments, with a path
// that is not UTF-8, HTML's characters and a finding on the machine.
func TestCheckStreamsTheSameBytes(t *testing.T) {
	env := func(path string) monitor.EnvReport {
		e := &pyenv.Env{Path: path, Layout: pyenv.LayoutPOSIX, Packages: map[string]*pyenv.Package{
			"torch": {Version: "2.5.1+cu121", Evidence: []pyenv.Evidence{{File: path + "/x", Says: `<a & "b">`}}}}}
		return monitor.EnvReport{Env: e, Via: "argument", Verdict: monitor.VerdictOK,
			Findings: []finding.Finding{{Code: "X", Severity: finding.SeverityWarning, Env: path, Message: "envs: [] \"envs\": []"}}}
	}
	for _, tc := range []struct {
		name string
		envs []monitor.EnvReport
	}{
		{"none", nil},
		{"empty", []monitor.EnvReport{}},
		{"one", []monitor.EnvReport{env("/home/a/.venv")}},
		{"several", []monitor.EnvReport{env("/home/a/.venv"), env("/home/b\xff/.venv"), env("/tmp/\"envs\": []")}},
	} {
		r := monitor.CheckResult{GPU: gpu.State{Driver: "550.54.15"}, Envs: tc.envs,
			Findings: []finding.Finding{{Code: "NO_GPU_DRIVER", Severity: finding.SeverityError, Message: "m"}}, Complete: true}
		var got, want bytes.Buffer
		if err := writeCheck(&got, r); err != nil {
			t.Fatal(err)
		}
		if err := indented(&want, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: writeCheck wrote\n%s\nwant\n%s", tc.name, got.Bytes(), want.Bytes())
		}
	}
}
