// Package gpucanary_test holds the rules that span the whole module: it
// sits at the root so that no package it judges (the GUI-free engine in
// monitor/ above all) has to name what it must never import.
package gpucanary_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/gpucanary/gpucanary/"

// importRule is one of docs/ARCHITECTURE.md's arrows. A package matches pkg
// ("monitor/kb") or, for a pattern ending in "/...", the tree below it.
// forbidden names imports it must not have (forbids); only, when set, is the
// complete list of the module's packages it may import (a leaf's rule:
// anything new it reaches for has to be added here, on purpose).
type importRule struct {
	pkg       string
	forbidden []string
	only      []string
}

var importRules = []importRule{
	{pkg: "monitor/...", forbidden: []string{mod + "app", mod + "cmd", mod + "output", "fyne.io/"}},
	{pkg: "output/...", forbidden: []string{mod + "app", mod + "cmd", mod + "monitor/engine", mod + "monitor/inspect", mod + "monitor/health", "fyne.io/"}},
	{pkg: "app/...", forbidden: []string{mod + "cmd"}},
	{pkg: "app/present", forbidden: []string{"fyne.io/", mod + "monitor/engine"}},
	// The text for people every view shares: a leaf of output/ that app/
	// and output/text both import.
	{pkg: "output/words", only: []string{"monitor", "monitor/human", "monitor/procs"}},
	// A repair plan in words, for fix and the windows' dialog; the other
	// outputs do not import the planner.
	{pkg: "output/plantext", only: []string{"monitor/fixplan"}},
	{pkg: "output/text", forbidden: []string{mod + "monitor/fix", mod + "monitor/fixplan"}},
	{pkg: "app/tray", forbidden: []string{"fyne.io/fyne"}},
	// The shared types' package runs nothing: no engine, no rule, no
	// repair, no one-shot check. They import it, so that a view of its
	// types (output/) needs none of them.
	{pkg: "monitor", only: []string{"monitor/finding", "monitor/gpu", "monitor/pathjson", "monitor/procs", "monitor/pyenv", "monitor/pyenv/uvproject"}},
	{pkg: "monitor/finding", only: []string{"monitor/pathjson", "monitor/pyenv"}},
	{pkg: "monitor/inspect", forbidden: []string{mod + "monitor/engine", mod + "monitor/store", mod + "monitor/report"}},
	// The rules ask the repair planner for their fix commands directly;
	// the runner, which runs and verifies a repair, sits above them.
	{pkg: "monitor/health", forbidden: []string{mod + "monitor/fix", mod + "monitor/engine", mod + "monitor/report", mod + "monitor/inspect"}},
	{pkg: "monitor/fixplan", forbidden: []string{mod + "monitor/fix", mod + "monitor/health"},
		only: []string{"monitor/gpu", "monitor/kb", "monitor/procs", "monitor/pyenv", "monitor/pyenv/uvproject", "monitor/shell"}},
	// The engine reads the repairs' journals, and nothing else of the
	// runner: a repair runs in the process that asked for it.
	{pkg: "monitor/engine", forbidden: []string{mod + "monitor/fix"}},
	{pkg: "monitor/fixjournal", only: []string{"monitor/fixplan", "monitor/safefs"}},
	{pkg: "monitor/fix", forbidden: []string{mod + "monitor/engine", mod + "monitor/report", mod + "monitor/inspect"},
		only: []string{"monitor/finding", "monitor/fixjournal", "monitor/fixplan", "monitor/gpu", "monitor/health", "monitor/human", "monitor/kb", "monitor/nowindow", "monitor/procs", "monitor/pyenv", "monitor/pyenv/uvproject", "monitor/safefs", "monitor/shell"}},
	// pyenv may import its own packages below it: pyspec and, under
	// internal/ (which Go keeps from everything outside monitor/pyenv),
	// the site module's import path (sitepath) and the walk of a folder
	// tree (walk). The search for environments (envsearch) sits above it:
	// it reads pyenv's managers table, and pyenv never asks it.
	{pkg: "monitor/pyenv", forbidden: []string{mod + "monitor/pyenv/envsearch"},
		only: []string{"monitor/fatbin", "monitor/filefacts", "monitor/fstrace", "monitor/pyenv/pyspec", "monitor/safefs"}},
	{pkg: "monitor/pyenv/envsearch", only: []string{"monitor/pyenv", "monitor/pyenv/internal/walk", "monitor/safefs"}},
	// The one package for PEP 440/508 and METADATA, which pyenv and
	// uvproject share: it reads text and knows no environment.
	{pkg: "monitor/pyenv/pyspec", only: []string{}},
	// The site emulation and the walk know no manager, no environment and
	// no search: pyenv's reading and envsearch use them, not the reverse.
	{pkg: "monitor/pyenv/internal/sitepath", only: []string{"monitor/fstrace", "monitor/safefs"}},
	{pkg: "monitor/pyenv/internal/walk", only: []string{"monitor/safefs"}},
	{pkg: "monitor/pyenv/uvproject", only: []string{"monitor/config", "monitor/fstrace", "monitor/pyenv/pyspec", "monitor/safefs"}},
	{pkg: "monitor/procs", only: []string{"monitor/fatbin", "monitor/gpu", "monitor/pyenv"}},
	{pkg: "monitor/gpu", only: []string{"monitor/safefs"}},
	{pkg: "monitor/kb", only: []string{"monitor/fatbin", "monitor/gpu", "monitor/owned", "monitor/safefs"}}, // safefs, owned: overlay files, which a user writes
	{pkg: "monitor/kbrefresh", only: []string{"monitor/config", "monitor/kb"}},
	{pkg: "monitor/report", forbidden: []string{mod + "monitor/engine", mod + "monitor/fix", mod + "monitor/health"}},
	{pkg: "monitor/store", forbidden: []string{mod + "monitor/engine", mod + "monitor/fix", mod + "monitor/health"}},
	{pkg: "monitor/guard", only: []string{"monitor/human", "monitor/owned", "monitor/pyenv", "monitor/pyenv/uvproject"}},
	{pkg: "monitor/shell", only: []string{}},
	{pkg: "monitor/safefs", only: []string{}},
	{pkg: "monitor/fatbin/...", only: []string{"monitor/filefacts"}},
	{pkg: "monitor/filefacts", only: []string{"monitor/cachefiles", "monitor/owned"}},
	{pkg: "monitor/cachefiles", only: []string{}},
	// A read's record of what it looked at, and the answers kept by it:
	// below every reader, knowing no environment.
	{pkg: "monitor/fstrace", only: []string{"monitor/safefs"}},
	{pkg: "monitor/answers", only: []string{"monitor/cachefiles", "monitor/fstrace", "monitor/safefs"}},
	{pkg: "monitor/pathjson", only: []string{}},
	{pkg: "monitor/human", only: []string{}},
}

// buildConfigs are the builds the rules hold for: Linux with and without
// the GUI, and Windows, whose _windows.go files a Linux build never reads.
var buildConfigs = []struct {
	name string
	env  []string
	tags string
}{
	{"linux", []string{"GOOS=linux"}, ""},
	{"linux nogui", []string{"GOOS=linux"}, "nogui"},
	{"windows", []string{"GOOS=windows"}, ""},
	{"windows nogui", []string{"GOOS=windows"}, "nogui"},
}

// TestImportRules keeps docs/ARCHITECTURE.md's arrows true on every
// platform and build the project ships: data flows one way, and the leaves
// import nothing above them.
func TestImportRules(t *testing.T) {
	for _, cfg := range buildConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			imports := moduleImports(t, cfg.env, cfg.tags)
			for pkg, deps := range imports {
				for _, r := range importRules {
					if !r.matches(pkg) {
						continue
					}
					for _, d := range deps {
						if msg := r.judge(pkg, d); msg != "" {
							t.Errorf("%s (%s): %s (docs/ARCHITECTURE.md)", pkg, cfg.name, msg)
						}
					}
				}
			}
		})
	}
}

// moduleImports lists each of the module's packages with what it imports,
// for one GOOS and build tags. cgo stays on, as the Makefile builds, so
// that files importing "C" are read too.
func moduleImports(t *testing.T, env []string, tags string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "-tags", tags, mod+"...")
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=1"), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("listing the module's imports (%v, tags %q): %v", env, tags, err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		imports[strings.TrimPrefix(pkg, mod)] = strings.Fields(deps)
	}
	if len(imports) < 20 {
		t.Fatalf("go list saw only %d packages (%v, tags %q)", len(imports), env, tags)
	}
	return imports
}

func (r importRule) matches(pkg string) bool {
	tree, isTree := strings.CutSuffix(r.pkg, "/...")
	return pkg == tree || isTree && strings.HasPrefix(pkg, tree+"/")
}

// forbids reports whether the forbidden import f names dep: f itself or
// the tree below it ("monitor/fix" is not "monitor/fixplan"); an f that
// ends in "/" ("fyne.io/") names everything under it.
func forbids(f, dep string) bool {
	if strings.HasSuffix(f, "/") {
		return strings.HasPrefix(dep, f)
	}
	return dep == f || strings.HasPrefix(dep, f+"/")
}

// judge says what is wrong with pkg importing dep, "" when nothing is.
func (r importRule) judge(pkg, dep string) string {
	for _, f := range r.forbidden {
		if forbids(f, dep) {
			return "imports " + dep
		}
	}
	own, internal := strings.CutPrefix(dep, mod)
	if r.only == nil || !internal || strings.HasPrefix(own, pkg+"/") {
		return ""
	}
	for _, allowed := range r.only {
		if own == allowed {
			return ""
		}
	}
	return "imports " + dep + ", which is not among the packages it may import"
}

// TestForbidsNamesATreeNotAPrefix: forbidding the runner (monitor/fix)
// forbids no package whose name merely begins the same (monitor/fixplan).
func TestForbidsNamesATreeNotAPrefix(t *testing.T) {
	for _, tc := range []struct {
		f, dep string
		want   bool
	}{
		{mod + "monitor/fix", mod + "monitor/fix", true},
		{mod + "monitor/fix", mod + "monitor/fix/sub", true},
		{mod + "monitor/fix", mod + "monitor/fixplan", false},
		{mod + "monitor/fix", mod + "monitor/fixjournal", false},
		{"fyne.io/", "fyne.io/fyne/v2", true},
		{"fyne.io/fyne", "fyne.io/fyne/v2/app", true},
		{"fyne.io/fyne", "fyne.io/systray", false},
	} {
		if got := forbids(tc.f, tc.dep); got != tc.want {
			t.Errorf("forbids(%q, %q) = %v, want %v", tc.f, tc.dep, got, tc.want)
		}
	}
}
