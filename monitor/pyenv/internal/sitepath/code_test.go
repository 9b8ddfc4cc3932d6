package sitepath

import (
	"fmt"
	"testing"
)

// TestReadPthCode: the import lines tools write that move folders on
// sys.path are followed; a line that touches sys.path some other way is
// code GPU Canary cannot follow; lines that leave sys.path alone (the
// ones virtualenv, setuptools and namespace packages write) are neither.
func TestReadPthCode(t *testing.T) {
	nspkg := "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join(sys._getframe(1).f_locals['sitedir'], *('mpl_toolkits',));" +
		"importlib = has_mfs and __import__('importlib.util');has_mfs and __import__('importlib.machinery');" +
		"m = has_mfs and sys.modules.setdefault('mpl_toolkits', importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('mpl_toolkits', [os.path.dirname(p)])));" +
		"m = m or sys.modules.setdefault('mpl_toolkits', types.ModuleType('mpl_toolkits'));mp = (m or []) and m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)"
	for _, tt := range []struct {
		name, line string
		ops        string
		pathCode   bool
	}{
		{"insert at the front", "import sys; sys.path.insert(0, '/abs/cpu_site')", "[{0 0 /abs/cpu_site}]", false},
		{"insert, double quotes, no spaces, a comment", `import sys;sys.path.insert( -2 ,"/a b/c");  # front`, "[{0 -2 /a b/c}]", false},
		{"append, with a semicolon in the literal", "import os, sys; sys.path.append('/x;y')", "[{1 0 /x;y}]", false},
		{"Windows folder", `import sys; sys.path.insert(0, 'C:\\cpu site')`, `[{0 0 C:\cpu site}]`, false},
		{"several", "import sys; sys.path.insert(0, '/a'); sys.path.append('/b')", "[{0 0 /a} {1 0 /b}]", false},
		{"easy_install's first line", "import sys; sys.__plen = len(sys.path)", "[{2 0 }]", false},
		{"easy_install's last line", "import sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)", "[{3 0 }]", false},
		{"easy_install's last line, written tighter", `import sys;new=sys.path[sys.__plen:];del sys.path[sys.__plen:];p=getattr(sys,"__egginsert",0);sys.path[p:p]=new;sys.__egginsert=p+len(new)`, "[{3 0 }]", false},
		{"a relative folder", "import sys; sys.path.insert(0, 'cpu_site')", "[]", true},
		{"a folder from a variable", "import sys, os; sys.path.insert(0, os.environ['X'])", "[]", true},
		{"a raw string", `import sys; sys.path.insert(0, r'/abs')`, "[]", true},
		{"a conditional insert", "import sys; 1 and sys.path.insert(0, '/abs')", "[]", true},
		{"addsitedir", "import site; site.addsitedir('/opt/site')", "[]", true},
		{"a followed statement then an unfollowed one", "import sys; sys.path.insert(0, '/a'); sys.path.extend(['/b'])", "[]", true},
		{"an unterminated literal", "import sys; sys.path.insert(0, '/abs)", "[]", true},
		{"virtualenv", "import _virtualenv", "[]", false},
		{"distutils-precedence.pth", "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); ", "[]", false},
		{"a namespace package", nspkg, "[]", false},
		{"pywin32", "import pywin32_bootstrap", "[]", false},
		// Code built at run time (issue 32, L13): what it does is unknown.
		{"exec of base64", "import sys;exec(__import__('base64').b64decode('aW1wb3J0IHN5cw=='))", "[]", true},
		{"exec with a space", "import base64; exec (base64.b64decode(b'eA=='))", "[]", true},
		{"eval", "import os; eval(os.environ.get('X', '0'))", "[]", true},
		{"compile", "import sys; c = compile('1', 'x', 'eval')", "[]", true},
		{"builtins.exec", "import builtins; builtins.exec('pass')", "[]", true},
		{"a followed insert then exec", "import sys; sys.path.insert(0, '/a'); exec('pass')", "[]", true},
		{"execute is not exec", "import mod; mod.execute_later()", "[]", false},
	} {
		e := ReadCode(tt.line)
		if got := fmt.Sprint(e.Ops); got != tt.ops && !(got == "[]" && tt.ops == "[]") || e.PathCode != tt.pathCode {
			t.Errorf("%s: ReadCode(%q) = %v, PathCode %v; want %s, %v", tt.name, tt.line, e.Ops, e.PathCode, tt.ops, tt.pathCode)
		}
	}
}

// TestImportPathModel: list.insert's positions, and setuptools' egg
// block across two files (the second file's eggs after the first's).
func TestImportPathModel(t *testing.T) {
	ip := NewPath[string](StdlibEntries(false))
	ip.Append("own")
	ip.Insert(-1, "before-own")
	ip.Insert(99, "end")
	ip.Insert(-99, "front")
	ip.MarkEggs()
	ip.Append("egg1")
	if moved, at, ok := ip.MoveEggs(); !ok || len(moved) != 1 || at != 0 {
		t.Fatalf("MoveEggs = %v, %d, %v", moved, at, ok)
	}
	ip.MarkEggs()
	ip.Append("egg2")
	ip.Append("egg3")
	if _, at, _ := ip.MoveEggs(); at != 1 {
		t.Errorf("the second block's eggs went to %d, want 1 (after the first's)", at)
	}
	got := ip.Entries
	if want := "[egg1 egg2 egg3 front    before-own own end]"; fmt.Sprint(got) != want {
		t.Errorf("sys.path = %q, want %s", got, want)
	}
	if _, _, ok := NewPath[string](StdlibEntries(false)).MoveEggs(); ok {
		t.Error("an egg block's last line without its first moved something")
	}
}
