package pyenv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func FuzzParseVersionPy(f *testing.F) {
	f.Add([]byte("from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n__version__ = '2.8.0+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\ngit_version = 'x'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n"))
	f.Add([]byte("__version__ = \"1.12.1\"\ncuda = None\n"))
	f.Add([]byte("cuda: = '\n__version__=''"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := pyenv.ParseVersionPy(data)
		if err != nil {
			return
		}
		for _, s := range []string{v.Version, v.CUDA, v.HIP, v.XPU, v.GitVersion} {
			if strings.Contains(s, "\n") || strings.Contains(s, "'") && strings.Contains(s, `"`) || s != strings.TrimSpace(s) {
				t.Fatalf("field %q holds a newline, both quotes or padding", s)
			}
		}
		if v.Version == "" {
			t.Fatal("nil error with an empty __version__")
		}
		// What was read, written back in the annotated form, reads the same.
		again, err := pyenv.ParseVersionPy([]byte(fmt.Sprintf("__version__ = %s\ndebug = %s\ncuda: Optional[str] = %s\ngit_version = %s\nhip: Optional[str] = %s\nxpu: Optional[str] = %s\n",
			opt(v.Version), map[bool]string{true: "True", false: "False"}[v.Debug], opt(v.CUDA), quote(v.GitVersion), opt(v.HIP), opt(v.XPU))))
		if err != nil || again != v {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, v)
		}
	})
}

// opt writes an Optional[str] literal.
func opt(s string) string {
	if s == "" {
		return "None"
	}
	return quote(s)
}

// quote writes a Python string literal in the quote style s does not hold.
func quote(s string) string {
	if strings.Contains(s, "'") {
		return `"` + s + `"`
	}
	return "'" + s + "'"
}

func FuzzParsePyvenvCfg(f *testing.F) {
	f.Add([]byte("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\nuv = 0.5.11\n"))
	f.Add([]byte("=\n==\n a = b = c \n#x=y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for k, v := range pyenv.ParsePyvenvCfg(data) {
			if k == "" || k != strings.ToLower(k) || k != strings.TrimSpace(k) || strings.Contains(k, "=") || strings.ContainsAny(k, "\n") {
				t.Fatalf("bad key %q", k)
			}
			if v != strings.TrimSpace(v) || strings.Contains(v, "\n") {
				t.Fatalf("bad value %q for %q", v, k)
			}
		}
	})
}
