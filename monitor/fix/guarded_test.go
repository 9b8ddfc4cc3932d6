package fix_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
)

type fakeGuards struct {
	guarded bool
	liftErr error
	calls   []string
}

func (f *fakeGuards) Guarded(string) bool { return f.guarded }
func (f *fakeGuards) Lift(string) error   { f.calls = append(f.calls, "lift"); return f.liftErr }
func (f *fakeGuards) Set(string) error    { f.calls = append(f.calls, "set"); return nil }

// TestRunLiftsAndSetsTheGuard: a guarded environment's guard is lifted
// before the install and set again after it, whatever the install did; a
// guard that cannot be lifted stops the repair before it starts; an
// environment without one is left alone. (The real-pip test of `fix` on a
// guarded venv is cmd/gpucanary's TestGuardCheckFixUnguard.)
func TestRunLiftsAndSetsTheGuard(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone") // the install fails: no environment there
	cases := []struct {
		name  string
		g     fakeGuards
		calls []string
		err   string
	}{
		{name: "guarded", g: fakeGuards{guarded: true}, calls: []string{"lift", "set"}},
		{name: "not guarded", g: fakeGuards{}, calls: nil},
		{name: "cannot lift", g: fakeGuards{guarded: true, liftErr: errors.New("pip.conf edited")}, calls: []string{"lift"}, err: "lifting the guard"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.g
			var lines []string
			_, err := fix.Service{Guards: &g}.Run(context.Background(), fixplan.Plan{Env: gone}, func(l string) { lines = append(lines, l) })
			if err == nil {
				t.Fatal("an install into a missing environment succeeded")
			}
			if !slices.Equal(g.calls, c.calls) {
				t.Errorf("calls %v, want %v", g.calls, c.calls)
			}
			if c.err != "" && !strings.Contains(err.Error(), c.err) {
				t.Errorf("error %v, want %q", err, c.err)
			}
			if slices.Contains(c.calls, "set") && !strings.Contains(strings.Join(lines, "\n"), "set the guard again") {
				t.Errorf("lines %q do not say the guard was set again", lines)
			}
		})
	}
}
