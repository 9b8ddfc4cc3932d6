package gpucanary_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/output/words"
)

// TestDocsListEveryCode holds the user documents to monitor/finding: the
// codes docs/codes.md describes (a "- **`CODE`**:" item each), and those
// in the README's table when it has one, are exactly the codes the
// package defines. A code added without its words, or a code retired
// while the documents still promise it, fails here.
func TestDocsListEveryCode(t *testing.T) {
	defined := findingCodes(t)
	if len(defined) < 10 {
		t.Fatalf("found %d codes in monitor/finding, want the contract's ten or more: %v", len(defined), defined)
	}
	for _, doc := range []struct {
		file     string
		item     *regexp.Regexp
		optional bool // the README may leave the table to docs/codes.md
	}{
		{"docs/codes.md", regexp.MustCompile("(?m)^- \\*\\*`([A-Z0-9_]+)`\\*\\*"), false},
		{"README.md", regexp.MustCompile("(?m)^\\| `([A-Z0-9_]+)` \\|"), true},
	} {
		b, err := os.ReadFile(doc.file)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, m := range doc.item.FindAllStringSubmatch(string(b), -1) {
			listed = append(listed, m[1])
		}
		if len(listed) == 0 && doc.optional {
			continue
		}
		slices.Sort(listed)
		if dup := duplicated(listed); dup != "" {
			t.Errorf("%s lists %s twice", doc.file, dup)
		}
		listed = slices.Compact(listed)
		for _, c := range defined {
			if !slices.Contains(listed, c) {
				t.Errorf("%s does not list %s, which monitor/finding defines", doc.file, c)
			}
		}
		for _, c := range listed {
			if !slices.Contains(defined, c) {
				t.Errorf("%s lists %s, which monitor/finding does not define", doc.file, c)
			}
		}
	}
}

// findingCodes is the value of every exported Code* string constant in
// monitor/finding's non-test files, sorted.
func findingCodes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("monitor/finding/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Code") || !name.IsExported() || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if v, err := strconv.Unquote(lit.Value); err == nil {
						codes = append(codes, v)
					}
				}
			}
		}
	}
	slices.Sort(codes)
	return codes
}

func duplicated(sorted []string) string {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return sorted[i]
		}
	}
	return ""
}

// TestEveryCodeHasATitle: every finding code has the words a person reads
// for it (output/words.CodeTitle) in notifications and the History
// window, not its raw code.
func TestEveryCodeHasATitle(t *testing.T) {
	for _, code := range findingCodes(t) {
		if words.CodeTitle(code) == code {
			t.Errorf("%s has no title in output/words/codes.go", code)
		}
	}
}
