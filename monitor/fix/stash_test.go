package fix

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestRepairFromStashRemovesWhatTheRecordNames: a real torch wheel has
// torchgen/ and functorch/ beside torch/, and pip stashes each with it
// (~orchgen, ~unctorch; ~-nctorch when ~unctorch was taken). The repair
// planned from the stash removes those its RECORD names, and leaves
// another package's stash (~umpy) and a folder RECORD does not name
// (~orchlight) where they are.
func TestRepairFromStashRemovesWhatTheRecordNames(t *testing.T) {
	env := filepath.Join(t.TempDir(), ".venv")
	writeEnv(t, env, cpuTorch)
	site := sitePackagesOf(t, env)
	dist := "torch-2.5.1+cpu.dist-info"
	for _, d := range []string{"torchgen", "functorch", "numpy", "torchlight"} {
		if err := os.MkdirAll(filepath.Join(site, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	record, err := os.OpenFile(filepath.Join(site, dist, "RECORD"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.WriteString("torchgen/__init__.py,,\nfunctorch/__init__.py,,\n../../../bin/torchrun,,\n"); err != nil {
		t.Fatal(err)
	}
	record.Close()
	// pip's renames, the second functorch name as when the first is taken.
	for from, to := range map[string]string{
		"torch": "~orch", dist: "~orch-2.5.1+cpu.dist-info", "torchgen": "~orchgen",
		"functorch": "~-nctorch", "numpy": "~umpy", "torchlight": "~orchlight",
	} {
		if err := os.Rename(filepath.Join(site, from), filepath.Join(site, to)); err != nil {
			t.Fatal(err)
		}
	}
	s := Service{GPU: func(context.Context) gpu.State { return a100Driver550 }}
	pr, err := s.Prepare(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range pr.Plan.Cleanup {
		got = append(got, filepath.Base(c))
	}
	if want := []string{"~-nctorch", "~orch", "~orch-2.5.1+cpu.dist-info", "~orchgen"}; !slices.Equal(got, want) {
		t.Errorf("cleanup %q, want %q", got, want)
	}
	if pr.Plan.Restores == "" || pr.Plan.Blocked != "" {
		t.Errorf("plan %+v: want one from pip's stash", pr.Plan)
	}
}

func TestPipStashOf(t *testing.T) {
	for _, tc := range []struct {
		name, top string
		want      bool
	}{
		{"~orch", "torch", true},
		{"~-rch", "torch", true},
		{"~~~ch", "torch", true},
		{"~torch", "torch", true},
		{"~-torch", "torch", true},
		{"~orch", "torchgen", false},
		{"~orchgen", "torch", false},
		{"~unctorch", "functorch", true},
		{"~orch", "porch", true}, // the name cannot tell: RECORD names which
		{"torch", "torch", false},
		{"~xorch", "torch", false},
	} {
		if got := pipStashOf(tc.name, tc.top); got != tc.want {
			t.Errorf("pipStashOf(%q, %q) = %v, want %v", tc.name, tc.top, got, tc.want)
		}
	}
}

func sitePackagesOf(t *testing.T, env string) string {
	t.Helper()
	e, err := pyenv.Inspect(env)
	if err != nil || e.SitePackages == "" {
		t.Fatalf("reading %s: %v", env, err)
	}
	return e.SitePackages
}
