package managers

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestRulesKeyedByTable: every manager's rules here are keyed by a Name in
// pyenv's table, so a renamed or misspelt entry cannot leave a manager
// silently without its places, project rule or reinstall; and the joined
// table keeps pyenv's order, the order the search and the resolver ask in.
func TestRulesKeyedByTable(t *testing.T) {
	names := map[string]bool{}
	for _, m := range pyenv.Managers() {
		names[m.Name] = true
	}
	for name := range rules {
		if !names[name] {
			t.Errorf("rules name %q, which pyenv's managers table does not", name)
		}
	}
	joined := Managers()
	for i, m := range pyenv.Managers() {
		if i >= len(joined) || joined[i].Name != m.Name {
			t.Fatalf("joined table differs from pyenv's at %d", i)
		}
	}
	if len(joined) != len(pyenv.Managers()) {
		t.Errorf("joined table has %d entries, pyenv's %d", len(joined), len(pyenv.Managers()))
	}
}
