package pyenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readDirs are the folders of the code an environment's read runs
// (InspectWith, and the uv project lookups after it): every look they make
// at the disk goes through the read's trace (monitor/fstrace), so that a
// kept answer notices any change it depends on. internal/walk is left
// out: only discovery (envsearch), which is not kept, walks with it.
var readDirs = []string{".", "uvproject", "internal/sitepath", "pyspec"}

// untracedLooks are the selectors that look at the disk (or at the
// process's variables) other than through a trace.
var untracedLooks = map[string][]string{
	"os": {"Stat", "Lstat", "ReadDir", "Open", "OpenFile", "ReadFile", "Readlink", "DirFS",
		"Getenv", "LookupEnv", "Environ", "UserHomeDir", "Getwd"},
	"filepath": {"EvalSymlinks", "Glob", "Walk", "WalkDir"},
	"safefs":   {"ReadFile", "Reader", "Open", "OpenDir", "ReadDir"},
}

// untracedAllowed are the functions (file and name) that may look at the
// disk directly: none runs in a read whose answer is kept.
var untracedAllowed = map[string]string{
	"envof.go IsEnv":                       "discovery (envsearch, projects): not kept",
	"envof.go EnvOfInterpreter":            "discovery (kernels, programs): not kept",
	"dirs_windows.go platformToolDirs":     "discovery's places (Where): not kept",
	"places.go Where.WithDefaults":         "discovery's default getenv and home: not kept",
	"places.go EnvList":                    "discovery (conda's environments.txt): not kept",
	"projects.go realDir":                  "resolution (which environment a command uses): not kept",
	"projects.go poetryProject":            "resolution: not kept",
	"projects.go pdmProject":               "resolution: not kept",
	"reinstall.go hasPip":                  "fix's command line, not the read",
	"sites.go InspectOptions.withDefaults": "the default getenv, wrapped by the trace's Getenv on the next line",
	"uvproject/pinfile.go PinIndex":        "fix writes the pin: not the read",
	"uvproject/pinfile.go writeBackup":     "fix's backup write: not the read",
}

// untracedCalls lists each direct look in src (a file named name) as
// "name func: pkg.Sel", the allowed ones left out (and noted in used).
func untracedCalls(t *testing.T, fset *token.FileSet, name string, src any, used map[string]bool) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		var body ast.Node = d
		key := name + " "
		if ok {
			key += funcName(fn)
			body = fn
		} else {
			key += "(package level)"
		}
		ast.Inspect(body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok && tracedTypes[typeName(lit.Type)] && !setsField(lit, "t") {
				// A listing or a site made without the read's trace: the
				// looks through it would go unrecorded.
				out = append(out, key+": "+typeName(lit.Type)+" without its trace (t) at "+fset.Position(lit.Pos()).String())
				return true
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !slices.Contains(untracedLooks[pkg.Name], sel.Sel.Name) {
				return true
			}
			if _, allowed := untracedAllowed[key]; allowed {
				used[key] = true
			} else {
				out = append(out, key+": "+pkg.Name+"."+sel.Sel.Name+" at "+fset.Position(sel.Pos()).String())
			}
			return true
		})
	}
	return out
}

// tracedTypes carry the read's trace for the looks made through them
// (dirIndex.isDir, a site's reads): each is made with it.
var tracedTypes = map[string]bool{"dirIndex": true, "sitePackages": true}

// typeName is the name of a composite literal's type, "" when it is not
// a plain name.
func typeName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// setsField reports whether the literal sets the field name.
func setsField(lit *ast.CompositeLit, name string) bool {
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == name {
				return true
			}
		}
	}
	return false
}

// funcName is "Recv.Name" for a method, "Name" for a function.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// TestReadLooksThroughTrace fails on a look at the disk in the read's code
// that does not go through the trace, outside untracedAllowed.
func TestReadLooksThroughTrace(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	used := map[string]bool{}
	for _, dir := range readDirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			src, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			files++
			for _, bad := range untracedCalls(t, fset, filepath.ToSlash(n), src, used) {
				t.Errorf("untraced look at the disk in the read: %s (go through the *fstrace.Trace, or allow it in untracedAllowed with a reason)", bad)
			}
		}
	}
	for k := range untracedAllowed {
		if !used[k] {
			t.Errorf("untracedAllowed names %q, which looks at nothing directly: remove it", k)
		}
	}
	if files < 40 {
		t.Fatalf("only %d files read: the test is not looking at the read's code", files)
	}
}

// TestUntracedCallsCanFail: the check flags a direct look, in a function
// or at package level, and lets an allowed one and a traced one pass.
func TestUntracedCallsCanFail(t *testing.T) {
	src := `package pyenv
var f = os.ReadFile
func (in *inspector) look(p string) { os.Stat(p); in.t.Stat(p); safefs.ReadDir(p); filepath.Glob(p) }
func hasPip(env *Env) bool { _, err := os.Stat(env.Path); return err == nil }
func index() *dirIndex { return &dirIndex{entries: nil} }
func traced(t *fstrace.Trace) *dirIndex { return &dirIndex{t: t} }
`
	got := untracedCalls(t, token.NewFileSet(), "reinstall.go", src, map[string]bool{})
	want := []string{"reinstall.go (package level): os.ReadFile", "reinstall.go inspector.look: os.Stat", "reinstall.go inspector.look: safefs.ReadDir", "reinstall.go inspector.look: filepath.Glob", "reinstall.go index: dirIndex without its trace (t)"}
	if len(got) != len(want) {
		t.Fatalf("flagged %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+" at ") {
			t.Errorf("flagged %q, want %q", got[i], want[i])
		}
	}
}
