package monitor

import (
	"encoding/json"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

func TestOverall(t *testing.T) {
	driver := gpu.State{Driver: "550", Devices: []gpu.Device{{Name: "A100"}}}
	sim := driver
	sim.Simulated = true
	envs := func(vs ...Verdict) []EnvReport {
		var out []EnvReport
		for _, v := range vs {
			out = append(out, EnvReport{Verdict: v})
		}
		return out
	}
	tests := []struct {
		name string
		r    CheckResult
		want Overall
	}{
		{"all well", CheckResult{GPU: driver, Envs: envs(VerdictOK, VerdictNoTorch)}, OverallHealthy},
		{"nothing at all", CheckResult{GPU: driver}, OverallHealthy},
		{"a warning", CheckResult{GPU: driver, Envs: envs(VerdictOK, VerdictWarning)}, OverallWarning},
		{"an error outranks a warning", CheckResult{GPU: driver, Envs: envs(VerdictWarning, VerdictError, VerdictOK)}, OverallError},
		{"no driver", CheckResult{Envs: envs(VerdictOK)}, OverallNoDriver},
		{"a broken environment outranks no driver", CheckResult{Envs: envs(VerdictError)}, OverallError},
		{"a warning outranks no driver", CheckResult{Envs: envs(VerdictWarning)}, OverallWarning},
		{"simulated", CheckResult{GPU: sim, Envs: envs(VerdictOK)}, OverallSimulated},
		{"no driver outranks simulated", CheckResult{GPU: gpu.State{Simulated: true}}, OverallNoDriver},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Overall(); got != tt.want {
				t.Errorf("Overall = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTypedValuesKeepTheirJSON: verdicts and kinds are typed, and written
// as the same strings scripts match.
func TestTypedValuesKeepTheirJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		V Verdict
		K Kind
		O Overall
	}{VerdictNoTorch, KindCUDAWheelReplaced, OverallNoDriver})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"V":"no-torch","K":"CUDA_WHEEL_REPLACED","O":"nodriver"}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}
