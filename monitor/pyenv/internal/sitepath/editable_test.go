package sitepath

import (
	"fmt"
	"testing"
)

// TestEditableFinderLine: only setuptools' exact finder line is read;
// any other import line is code GPU Canary does not run.
func TestEditableFinderLine(t *testing.T) {
	for _, tt := range []struct {
		line, mod string
		ok        bool
	}{
		{"import __editable___torch_2_5_1_finder; __editable___torch_2_5_1_finder.install()", "__editable___torch_2_5_1_finder", true},
		{"import\t__editable___torch_2_5_1_cu121_finder;__editable___torch_2_5_1_cu121_finder.install()  ", "__editable___torch_2_5_1_cu121_finder", true},
		{"import __editable___torch_2_5_1_finder; __editable___other_finder.install()", "", false},
		{"import __editable___torch_2_5_1_finder; __editable___torch_2_5_1_finder.install(); import os", "", false},
		{"import _virtualenv", "", false},
		{"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'", "", false},
		{"import __editable___a.b_finder; __editable___a.b_finder.install()", "", false},
	} {
		mod, ok := EditableFinder(tt.line)
		if ok != tt.ok || ok && mod != tt.mod {
			t.Errorf("EditableFinder(%q) = %q, %v; want %q, %v", tt.line, mod, ok, tt.mod, tt.ok)
		}
	}
}

// TestFinderMapping reads MAPPING as each setuptools release writes it
// (repr of a dict: either quote, escapes, a path with an undecodable
// byte as a surrogate escape).
func TestFinderMapping(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"setuptools 64-69", "import sys\nMAPPING = {'torch': '/home/ana/pytorch/torch'}\nNAMESPACES = {}\n", "[[torch /home/ana/pytorch/torch]]"},
		{"annotated", "MAPPING: dict[str, str] = {'functorch': '/src/functorch', 'torch': '/src/torch'}\n", "[[functorch /src/functorch] [torch /src/torch]]"},
		{"Windows path", `MAPPING = {'torch': 'C:\\Users\\ana\\pytorch\\torch'}` + "\n", `[[torch C:\Users\ana\pytorch\torch]]`},
		{"double quotes and escapes", `MAPPING = {"torch": "/src/it's\ttab\u00e9\udcff"}` + "\n", "[[torch /src/it's\ttab\u00e9\xff]]"},
		{"empty", "MAPPING = {}\n", "[]"},
		{"MAPPING_OTHER is not it", "MAPPING_OTHER = {'x': 'y'}\nMAPPING = {'torch': '/t'}\n", "[[torch /t]]"},
	} {
		got, err := FinderMapping([]byte(tt.src))
		if err != nil || fmt.Sprint(got) != tt.want {
			t.Errorf("%s: FinderMapping = %q, %v; want %s", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{
		"NAMESPACES = {}\n",
		"MAPPING = dict(torch='/src/torch')\n",
		"MAPPING = {'torch': '/src/torch'\n",
		"MAPPING = {'torch': 1}\n",
		"MAPPING = {'torch': '/src/torch\\q'}\n",
		"MAPPING = {'torch' '/src/torch'}\n",
	} {
		if got, err := FinderMapping([]byte(bad)); err == nil {
			t.Errorf("FinderMapping(%q) = %q, want an error", bad, got)
		}
	}
}
