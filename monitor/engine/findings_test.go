package engine

import (
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/store"
)

func TestFindingSetUpdate(t *testing.T) {
	cpu := finding.Finding{Code: "TORCH_CPU_BUILD", Env: "/a", Severity: finding.SeverityError, Fix: "pip install x", Message: "a CPU build beside a GPU"}
	cpuFine := finding.Finding{Code: "TORCH_CPU_BUILD", Env: "/a", Severity: finding.SeverityInfo, Message: "a CPU build, no GPU"}
	cpuOtherFix := cpu
	cpuOtherFix.Fix = "pip install y"
	cpuOtherWords := cpu
	cpuOtherWords.Message = "said otherwise"
	old := finding.Finding{Code: "OLD_DRIVER", Env: "/a", Severity: finding.SeverityWarning}
	job := finding.Finding{Code: "JOB_ON_CPU", Env: "/a", PID: 7}
	job8 := finding.Finding{Code: "JOB_ON_CPU", Env: "/a", PID: 8}
	codes := func(fs []finding.Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Key())
		}
		return out
	}
	tests := []struct {
		name            string
		had, now        []finding.Finding
		raised, cleared []string
		keep            []string
	}{
		{"nothing", nil, nil, nil, nil, nil},
		{"raised, in the order found", nil, []finding.Finding{old, cpu}, []string{"OLD_DRIVER|/a", "TORCH_CPU_BUILD|/a"}, nil, []string{"OLD_DRIVER|/a", "TORCH_CPU_BUILD|/a"}},
		{"still raised: no change", []finding.Finding{cpu}, []finding.Finding{cpu}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"cleared, in key order", []finding.Finding{old, cpu}, nil, nil, []string{"OLD_DRIVER|/a", "TORCH_CPU_BUILD|/a"}, nil},
		{"one for another", []finding.Finding{cpu}, []finding.Finding{old}, []string{"OLD_DRIVER|/a"}, []string{"TORCH_CPU_BUILD|/a"}, []string{"OLD_DRIVER|/a"}},
		{"processes are told apart by PID", []finding.Finding{job}, []finding.Finding{job8}, []string{"JOB_ON_CPU|/a|8"}, []string{"JOB_ON_CPU|/a|7"}, []string{"JOB_ON_CPU|/a|8"}},
		{"a repeat is one finding", nil, []finding.Finding{cpu, cpu}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		// Issue 16 point 6: the same finding with another verdict is said again.
		{"another severity is raised again", []finding.Finding{cpuFine}, []finding.Finding{cpu}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"another fix is raised again", []finding.Finding{cpu}, []finding.Finding{cpuOtherFix}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"another message alone is not", []finding.Finding{cpu}, []finding.Finding{cpuOtherWords}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"a verdict not remembered is not", []finding.Finding{carried("TORCH_CPU_BUILD|/a", "/a", store.Told{})}, []finding.Finding{cpu}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"a remembered verdict that changed is", []finding.Finding{carried("TORCH_CPU_BUILD|/a", "/a", store.Told{Severity: "info"})}, []finding.Finding{cpu}, []string{"TORCH_CPU_BUILD|/a"}, nil, []string{"TORCH_CPU_BUILD|/a"}},
		{"a remembered verdict that did not change is not", []finding.Finding{carried("TORCH_CPU_BUILD|/a", "/a", store.Told{Severity: "error", Fix: "pip install x"})}, []finding.Finding{cpu}, nil, nil, []string{"TORCH_CPU_BUILD|/a"}},
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
