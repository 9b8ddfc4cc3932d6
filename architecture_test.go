// Package gpucanary_test holds the rules that span the whole module: it
// sits at the root so that no package it judges (the GUI-free engine in
// monitor/ above all) has to name what it must never import.
package gpucanary_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
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
	// The tray's and the windows' text: it words through output/words,
	// never through another view's layout (the terminal's, the plan's).
	{pkg: "app/present", forbidden: []string{"fyne.io/", mod + "monitor/engine", mod + "output/text", mod + "output/plantext"}},
	// The one home of the text for people every view shares (the summary,
	// the counts, the verdicts' words, a process's cells): a leaf of
	// output/ that app/, output/text and cmd import, knowing no view.
	{pkg: "output/words", only: []string{"monitor", "monitor/human", "monitor/procs", "monitor/finding", "monitor/pyenv"}},
	// A repair plan in words, for fix and the windows' dialog; the other
	// outputs do not import the planner.
	{pkg: "output/plantext", only: []string{"monitor/fixplan"}},
	{pkg: "output/text", forbidden: []string{mod + "monitor/fix", mod + "monitor/fixplan"}},
	{pkg: "app/tray", forbidden: []string{"fyne.io/fyne"}},
	// The shared types' package runs nothing: no engine, no rule, no
	// repair, no one-shot check. They import it, so that a view of its
	// types (output/) needs none of them.
	{pkg: "monitor", only: []string{"monitor/finding", "monitor/gpu", "monitor/human", "monitor/pathjson", "monitor/procs", "monitor/pyenv", "monitor/pyenv/uvproject"}},
	{pkg: "monitor/finding", only: []string{"monitor/pathjson", "monitor/pyenv"}},
	{pkg: "monitor/inspect", forbidden: []string{mod + "monitor/engine", mod + "monitor/store", mod + "monitor/report"}},
	// The rules ask the repair planner for their fix commands directly;
	// the runner, which runs and verifies a repair, sits above them.
	{pkg: "monitor/health", forbidden: []string{mod + "monitor/fix", mod + "monitor/engine", mod + "monitor/report", mod + "monitor/inspect"}},
	{pkg: "monitor/fixplan", forbidden: []string{mod + "monitor/fix", mod + "monitor/health"},
		only: []string{"monitor/finding", "monitor/gpu", "monitor/kb", "monitor/procs", "monitor/pyenv", "monitor/pyenv/managers", "monitor/pyenv/uvproject", "monitor/shell"}},
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
	// it reads pyenv's managers table, and pyenv never asks it. So do the
	// managers' places, project rules and reinstall argv (managers): the
	// read recognises a manager's environment from pyenv's own table and
	// never reaches up to them.
	{pkg: "monitor/pyenv", forbidden: []string{mod + "monitor/pyenv/envsearch", mod + "monitor/pyenv/managers"},
		only: []string{"monitor/fatbin", "monitor/filefacts", "monitor/pyenv/disk", "monitor/pyenv/pyspec", "monitor/safefs"}},
	// What the search, the resolver and the repair plan know of each
	// manager beyond recognising its environments: it reads the settings
	// files of the tools (through the real disk) and pyenv's table, and
	// knows no search and no plan.
	{pkg: "monitor/pyenv/managers", only: []string{"monitor/pyenv", "monitor/pyenv/disk", "monitor/safefs"}},
	// The readers' disk: the interface every reader looks at the disk
	// through, and the real one over safefs.
	{pkg: "monitor/pyenv/disk", only: []string{"monitor/safefs"}},
	{pkg: "monitor/pyenv/envsearch", only: []string{"monitor/pyenv", "monitor/pyenv/internal/walk", "monitor/pyenv/managers", "monitor/safefs"}},
	// The one package for PEP 440/508 and METADATA, which pyenv and
	// uvproject share: it reads text and knows no environment.
	{pkg: "monitor/pyenv/pyspec", only: []string{}},
	// The site emulation and the walk know no manager, no environment and
	// no search: pyenv's reading and envsearch use them, not the reverse.
	{pkg: "monitor/pyenv/internal/sitepath", only: []string{"monitor/pyenv/disk"}},
	{pkg: "monitor/pyenv/internal/walk", only: []string{"monitor/safefs"}},
	{pkg: "monitor/pyenv/uvproject", only: []string{"monitor/config", "monitor/pyenv/disk", "monitor/pyenv/pyspec", "monitor/safefs"}},
	{pkg: "monitor/procs", only: []string{"monitor/fatbin", "monitor/gpu", "monitor/pyenv", "monitor/pyenv/managers"}},
	{pkg: "monitor/gpu", only: []string{"monitor/safefs"}},
	{pkg: "monitor/kb", only: []string{"monitor/fatbin", "monitor/gpu", "monitor/owned", "monitor/pyenv/pyspec", "monitor/safefs"}}, // safefs, owned: overlay files, which a user writes; pyspec: versions parsed once
	{pkg: "monitor/kbrefresh", only: []string{"monitor/config", "monitor/kb"}},
	{pkg: "monitor/report", forbidden: []string{mod + "monitor/engine", mod + "monitor/fix", mod + "monitor/health"}},
	{pkg: "monitor/store", forbidden: []string{mod + "monitor/engine", mod + "monitor/fix", mod + "monitor/health"}},
	{pkg: "monitor/guard", only: []string{"monitor/human", "monitor/owned", "monitor/pyenv", "monitor/pyenv/uvproject"}},
	{pkg: "monitor/shell", only: []string{}},
	{pkg: "monitor/safefs", only: []string{}},
	{pkg: "monitor/fatbin/...", only: []string{"monitor/filefacts"}},
	{pkg: "monitor/filefacts", only: []string{"monitor/cachefiles", "monitor/owned"}},
	{pkg: "monitor/cachefiles", only: []string{}},
	{pkg: "monitor/pathjson", only: []string{}},
	// Plain words below output/ (bytes, durations, escapes), for the
	// engine and the rules as much as the views: it knows no view.
	{pkg: "monitor/human", only: []string{}},
}

// buildConfigs are the builds the rules hold for: Linux with and without
// the GUI, Windows, whose _windows.go files a Linux build never reads,
// and macOS without the GUI: it has no NVIDIA GPU, but the engine must
// stay one port away from running there, not one file away from
// building.
var buildConfigs = []struct {
	name string
	env  []string
	tags string
}{
	{"linux", []string{"GOOS=linux"}, ""},
	{"linux nogui", []string{"GOOS=linux"}, "nogui"},
	{"windows", []string{"GOOS=windows"}, ""},
	{"windows nogui", []string{"GOOS=windows"}, "nogui"},
	{"darwin nogui", []string{"GOOS=darwin"}, "nogui"},
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

// storePackages are the packages whose stores (a fact store, a kernel
// cache) a reader is handed by its caller, never reaches for itself.
var storePackages = []string{"monitor/filefacts", "monitor/fatbin"}

// storeUsers are the readers that take their stores from their caller.
var storeUsers = []string{"monitor/pyenv/...", "monitor/procs/..."}

// TestReadersReachNoGlobalStore: the environment readers and the process
// scan use no variable of the store packages (a process-wide store, a
// cache they would share with every other reader unseen by their
// caller): the stores are fields their caller fills and flushes. A
// sentinel error (Err...) is a value, not a store.
func TestReadersReachNoGlobalStore(t *testing.T) {
	vars := map[string]map[string]bool{} // package name -> its package-level vars
	for _, p := range storePackages {
		vars[path.Base(p)] = packageVars(t, p)
	}
	for _, file := range sourceFiles(t, storeUsers) {
		for _, use := range storeUses(t, file, vars) {
			t.Errorf("%s uses %s, a variable of a store package: take the store from the caller (docs/ARCHITECTURE.md)", file, use)
		}
	}
}

// storeUses are the uses in file of the variables vars names (package
// name -> its variables), sentinel errors aside.
func storeUses(t *testing.T, file string, vars map[string]map[string]bool) []string {
	var out []string
	for _, use := range selectors(t, file) {
		if vars[use.pkg][use.name] && !strings.HasPrefix(use.name, "Err") {
			out = append(out, fmt.Sprintf("line %d: %s.%s", use.line, use.pkg, use.name))
		}
	}
	return out
}

// TestStoreUsesSeesAGlobal: the scan above finds a store variable used,
// and not a type, a function or a sentinel error of the same package.
func TestStoreUsesSeesAGlobal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.go")
	src := "package x\n\nfunc f() {\n\tfilefacts.Shared.Get(\"k\", p, filefacts.Of(fi))\n\t_ = &fatbin.Cache{}\n\t_ = fatbin.ErrMalformed\n}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]map[string]bool{"filefacts": {"Shared": true}, "fatbin": {"ErrMalformed": true}}
	got := storeUses(t, file, vars)
	if len(got) != 1 || got[0] != "line 4: filefacts.Shared" {
		t.Errorf("store uses %q, want the one of filefacts.Shared on line 4", got)
	}
}

// readerFiles are the environment reader's files (pyenv and the readers
// below it), and readerDiskFiles those of them allowed to look at the
// disk other than through the Disk they are handed, each with why.
var (
	readerFiles     = []string{"monitor/pyenv", "monitor/pyenv/internal/sitepath", "monitor/pyenv/uvproject"}
	readerDiskFiles = map[string]string{
		"monitor/pyenv/disk/disk.go":         "the real disk itself",
		"monitor/pyenv/envof.go":             "discovery: is a folder an environment, before any read",
		"monitor/pyenv/uvproject/pinfile.go": "the index pin, a write, not a read",
	}
	// diskCall is a look at the disk that a reader's file must make
	// through its Disk.
	diskCall = regexp.MustCompile(`\b(os\.(Stat|Lstat|Open|OpenFile|ReadDir|ReadFile|Readlink|Getenv|LookupEnv|UserHomeDir)|safefs\.[A-Z]\w*|filepath\.(EvalSymlinks|Glob|Walk|WalkDir))\(`)
)

// TestReaderLooksThroughItsDisk: the environment reader's files look at
// the disk only through the Disk their caller gives (pyenv.Reader), so a
// test can read an environment from memory and what a read learns can be
// kept by its caller; discovery and the pin's write, which are not the
// read, are named with why.
func TestReaderLooksThroughItsDisk(t *testing.T) {
	var files []string
	for _, dir := range readerFiles {
		files = append(files, sourceFiles(t, []string{dir})...)
	}
	for _, file := range files {
		if _, ok := readerDiskFiles[file]; ok {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if code, _, _ := strings.Cut(line, "//"); diskCall.MatchString(code) {
				t.Errorf("%s:%d looks at the disk other than through the reader's Disk: %s", file, i+1, strings.TrimSpace(line))
			}
		}
	}
	for file := range readerDiskFiles {
		if _, err := os.Stat(file); err != nil {
			t.Errorf("the allowlist names %s: %v", file, err)
		}
	}
}

// TestDiskCallSeesALook: the scan above finds the looks it is for, and
// not a comment or a Disk's method.
func TestDiskCallSeesALook(t *testing.T) {
	for line, want := range map[string]bool{
		`fi, err := os.Stat(p)`:            true,
		`f, err := safefs.Open(path)`:      true,
		`r, _ := filepath.EvalSymlinks(p)`: true,
		`fi, err := rd.Stat(p)`:            false,
		`data, err := d.ReadFile(p, 10)`:   false,
		`filepath.Join(a, b)`:              false,
	} {
		if got := diskCall.MatchString(line); got != want {
			t.Errorf("%q: match %v, want %v", line, got, want)
		}
	}
}

// sourceFiles are the non-test Go files of the packages named (a
// trailing "/..." takes the tree below), as paths from the module root.
func sourceFiles(t *testing.T, pkgs []string) []string {
	t.Helper()
	var files []string
	for _, p := range pkgs {
		dir, tree := strings.CutSuffix(p, "/...")
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != dir && (!tree || d.Name() == "testdata"):
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				files = append(files, filepath.ToSlash(path))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Fatalf("no source files in %v", pkgs)
	}
	return files
}

// packageVars are the package-level variables declared in dir's
// non-test files.
func packageVars(t *testing.T, dir string) map[string]bool {
	t.Helper()
	vars := map[string]bool{}
	for _, file := range sourceFiles(t, []string{dir}) {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						vars[n.Name] = true
					}
				}
			}
		}
	}
	return vars
}

// selector is one use of pkg.name in a file.
type selector struct {
	pkg, name string
	line      int
}

// selectors are the qualified identifiers (pkg.Name) in file.
func selectors(t *testing.T, file string) []selector {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []selector
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				out = append(out, selector{id.Name, s.Sel.Name, fset.Position(s.Pos()).Line})
			}
		}
		return true
	})
	return out
}
