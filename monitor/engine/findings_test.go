package engine

import (
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/store"
)

func TestFindingSetUpdate(t *testing.T) {
	cpu := health.Finding{Code: "TORCH_CPU_BUILD", Env: "/a", Severity: health.SeverityError, Fix: "pip install x", Message: "a CPU build beside a GPU"}
	cpuFine := health.Finding{Code: "TORCH_CPU_BUILD", Env: "/a", Severity: health.SeverityInfo, Message: "a CPU build, no GPU"}
	cpuOtherFix := cpu
	cpuOtherFix.Fix = "pip install y"
	cpuOtherWords := cpu
	cpuOtherWords.Message = "said otherwise"
	old := health.Finding{Code: "OLD_DRIVER", Env: "/a", Severity: health.SeverityWarning}
	job := health.Finding{Code: "JOB_ON_CPU", Env: "/a", PID: 7}
	job8 := health.Finding{Code: "JOB_ON_CPU", Env: "/a", PID: 8}
	codes := func(fs []health.Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Key())
		}
		return out
	}
	tests := []struct {
		name            string
		had, now        []health.Finding
		raised, cleared []string
		keep            []string
	}{
		{"nothing", nil, nil, nil, nil, nil},
		{"raised, in the order found", nil, []health.Finding{old, cpu}, []string{"OLD_DRIVER|/a", "TORCH_CPU_BUILD|/a"}, nil, []string{"OLD_DRIVER|/a", "TORCH_CPU_BUILD|/a"}},
		{"still raised: no change", []health.Finding{cpu}, []health.Finding{cpu}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"cleared, in key order", []health.Finding{old, cpu}, nil, nil, []string{"OLD_DRIVER|/a", "TORCH_CPU_BUILD|/a"}, nil},
		{"one for another", []health.Finding{cpu}, []health.Finding{old}, []string{"OLD_DRIVER|/a"}, []string{"TORCH_CPU_BUILD|/a"}, []string{"OLD_DRIVER|/a"}},
		{"processes are told apart by PID", []health.Finding{job}, []health.Finding{job8}, []string{"JOB_ON_CPU|/a|8"}, []string{"JOB_ON_CPU|/a|7"}, []string{"JOB_ON_CPU|/a|8"}},
		{"a repeat is one finding", nil, []health.Finding{cpu, cpu}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		// Issue 16 point 6: the same finding with another verdict is said again.
		{"another severity is raised again", []health.Finding{cpuFine}, []health.Finding{cpu}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"another fix is raised again", []health.Finding{cpu}, []health.Finding{cpuOtherFix}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"another message alone is not", []health.Finding{cpu}, []health.Finding{cpuOtherWords}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"a verdict not remembered is not", []health.Finding{carried("TORCH_CPU_BUILD|/a", "/a", store.Told{})}, []health.Finding{cpu}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"a remembered verdict that changed is", []health.Finding{carried("TORCH_CPU_BUILD|/a", "/a", store.Told{Severity: "info"})}, []health.Finding{cpu}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"a remembered verdict that did not change is not", []health.Finding{carried("TORCH_CPU_BUILD|/a", "/a", store.Told{Severity: "error", Fix: "pip install x"})}, []health.Finding{cpu}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := findingSet{}
			for _, f := range tt.had {
				s[f.Key()] = f
			}
			c := s.update(tt.now)
			if !slices.Equal(codes(c.raised), tt.raised) || !slices.Equal(codes(c.cleared), tt.cleared) {
				t.Errorf("raised %v cleared %v, want %v and %v", codes(c.raised), codes(c.cleared), tt.raised, tt.cleared)
			}
			var keys []string
			for k := range s {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tt.keep) {
				t.Errorf("set after = %v, want %v", keys, tt.keep)
			}
		})
	}
}

// TestCarriedFindingClears: a finding remembered from an earlier run by
// its key clears with its code and environment.
func TestCarriedFindingClears(t *testing.T) {
	s := findingSet{"TORCH_CPU_BUILD|/a": carried("TORCH_CPU_BUILD|/a", "/a", store.Told{})}
	evs := envFindingEvents("/a", time0, s.update(nil))
	if len(evs) != 1 || evs[0].Finding.Code != "TORCH_CPU_BUILD" || evs[0].Finding.Env != "/a" ||
		evs[0].Message != "Resolved in /a: TORCH_CPU_BUILD no longer applies." {
		t.Fatalf("events = %+v", evs)
	}
}
