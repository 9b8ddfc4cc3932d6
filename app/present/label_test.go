package present

import (
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestEnvLabelNamesTheError: the tray's line of an environment whose
// error is llama-cpp-python's CPU build names llama-cpp-python, not the
// healthy CUDA torch beside it (issue 43); a torch error stays torch's
// story, and so does an environment with no error.
func TestEnvLabelNamesTheError(t *testing.T) {
	env := &pyenv.Env{Path: filepath.Join("x", "llm", ".venv"), Packages: map[string]*pyenv.Package{
		pyenv.Torch:          {Version: "2.5.1+cu124", Build: pyenv.BuildCUDA, CUDA: "12.4"},
		pyenv.LlamaCppPython: {Version: "0.3.4", Build: pyenv.BuildCPU, Backends: []string{"cpu"}},
	}}
	llama := finding.Finding{Code: finding.CodeLlamaCPPCPUBuild, Severity: finding.SeverityError}
	torch := finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError}
	info := finding.Finding{Code: finding.CodeLlamaCPPCPUBuild, Severity: finding.SeverityInfo}
	for _, tc := range []struct {
		name     string
		verdict  monitor.Verdict
		findings []finding.Finding
		want     string
	}{
		{"llama.cpp on the CPU", monitor.VerdictError, []finding.Finding{llama}, "✗ llm/.venv — llama-cpp-python 0.3.4 CPU only"},
		{"torch's error first", monitor.VerdictError, []finding.Finding{torch, llama}, "✗ llm/.venv — torch 2.5.1+cu124 CUDA 12.4"},
		{"no error", monitor.VerdictOK, []finding.Finding{info}, "✓ llm/.venv — torch 2.5.1+cu124 CUDA 12.4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EnvLabel(monitor.EnvReport{Env: env, Verdict: tc.verdict, Findings: tc.findings}); got != tc.want {
				t.Errorf("EnvLabel = %q, want %q", got, tc.want)
			}
		})
	}
}
