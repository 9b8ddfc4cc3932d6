package envsearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// TestWalkPlace: a HoldsTree place is walked to its depth, skips its
// Skip names at its top only, and a walk its entry budget stops says so.
func TestWalkPlace(t *testing.T) {
	root := t.TempDir()
	embedded := func(rel string) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		for name, content := range map[string]string{"python.exe": "MZ", "python312.dll": "MZ", "python312.zip": "PK", "python312._pth": "python312.zip\n.\nimport site\n"} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	shallow := embedded("AI/ComfyUI_windows_portable/python_embeded")
	deep := embedded("a/b/c/d/python_embeded")
	skippedTop := embedded("Windows/x/python_embeded")
	skippedLower := embedded("AI/Windows/python_embeded")
	for i := range 40 {
		if err := os.MkdirAll(filepath.Join(root, "data", fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		entries int
		want    map[string]bool
		stopped bool
	}{
		{"within budget", 0, map[string]bool{shallow: true, skippedLower: true, deep: false, skippedTop: false}, false},
		{"budget spent", 5, map[string]bool{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &discovery{o: Options{}.withDefaults(), seen: map[string]bool{}}
			d.walkPlace(context.Background(), managers.Place{Path: root, Holds: managers.HoldsTree, Depth: 4, Entries: c.entries, Skip: []string{"windows"}, From: "test"}, "apps")
			got := map[string]bool{}
			for _, f := range d.found {
				got[f.Path] = true
				if f.Via != "apps" || f.From != "test" {
					t.Errorf("found %+v", f)
				}
			}
			for p, want := range c.want {
				if got[p] != want {
					t.Errorf("%s found = %v, want %v", p, got[p], want)
				}
			}
			if (d.stopped != "") != c.stopped || c.stopped && !strings.Contains(d.stopped, "budget of 5 entries") {
				t.Errorf("stopped = %q", d.stopped)
			}
		})
	}
}
