// Package gpucanary_test holds the rules that span the whole module: it
// sits at the root so that no package it judges (the GUI-free engine in
// monitor/ above all) has to name what it must never import.
package gpucanary_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules keeps docs/ARCHITECTURE.md's arrows true: data flows
// one way, and the leaves import nothing above them.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "-tags", "", "github.com/gpucanary/gpucanary/...").Output()
	if err != nil {
		t.Fatalf("listing the module's imports: %v", err)
	}
	const mod = "github.com/gpucanary/gpucanary/"
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		imports[strings.TrimPrefix(pkg, mod)] = strings.Fields(deps)
	}
	rules := []struct {
		pkg       string // a package, or a tree ending in "/..."
		forbidden []string
	}{
		{"monitor/...", []string{mod + "app", mod + "cmd", mod + "output", "fyne.io/"}},
		{"output/...", []string{mod + "app", mod + "cmd", mod + "monitor/engine", "fyne.io/"}},
		{"app/present", []string{"fyne.io/", mod + "monitor/engine"}},
		{"app/tray", []string{"fyne.io/fyne"}},
		{"monitor/health", []string{mod + "monitor/fix", mod + "monitor/engine", mod + "monitor/report"}},
		{"monitor/fix", []string{mod + "monitor/health", mod + "monitor/engine", mod + "monitor/report"}},
		{"monitor/pyenv/...", []string{mod + "monitor/gpu", mod + "monitor/kb", mod + "monitor/health", mod + "monitor/fix", mod + "monitor/procs", mod + "monitor/engine"}},
		{"monitor/procs", []string{mod + "monitor/health", mod + "monitor/fix", mod + "monitor/engine", mod + "monitor/kb"}},
		{"monitor/gpu", []string{mod + "monitor/pyenv", mod + "monitor/procs", mod + "monitor/health", mod + "monitor/kb"}},
		{"monitor/kb", []string{mod + "monitor/pyenv", mod + "monitor/procs", mod + "monitor/health", mod + "monitor/fix", mod + "monitor/engine"}},
		{"monitor/shell", []string{mod}},
		{"monitor/safefs", []string{mod}},
		{"monitor/fatbin/...", []string{mod}},
		{"monitor/pathjson", []string{mod}},
	}
	if len(imports) < 20 {
		t.Fatalf("go list saw only %d packages", len(imports))
	}
	for pkg, deps := range imports {
		for _, r := range rules {
			tree := strings.TrimSuffix(r.pkg, "/...")
			if pkg != tree && !(r.pkg != tree && strings.HasPrefix(pkg, tree+"/")) {
				continue
			}
			for _, d := range deps {
				for _, f := range r.forbidden {
					if strings.HasPrefix(d, f) && !(f == mod && strings.HasPrefix(d, mod+pkg)) {
						t.Errorf("%s imports %s (docs/ARCHITECTURE.md)", pkg, d)
					}
				}
			}
		}
	}
}
