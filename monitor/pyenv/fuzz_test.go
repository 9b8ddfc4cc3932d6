package pyenv_test

import (
	"bytes"
	"fmt"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
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

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\nRequires-Dist: a\n\nbody"))
	f.Add([]byte("Version:\n"))
	f.Add([]byte("\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		m, err := pyenv.ParseMetadata(cr)
		if cr.n > pyenv.MetadataLimit {
			t.Fatalf("read %d bytes, over the limit", cr.n)
		}
		if err == nil && m.Version == "" {
			t.Fatal("nil error without a Version")
		}
		for _, s := range append([]string{m.Name, m.Version}, m.RequiresDist...) {
			if strings.ContainsAny(s, "\r\n") || s != strings.TrimSpace(s) {
				t.Fatalf("field %q holds a line break or padding", s)
			}
		}
	})
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

// FuzzRequirement: no Requires-Dist line makes the requirement parser or
// the marker evaluator panic (a panic would stop an inspection), and a
// marker that is known not to apply in an environment never applies.
func FuzzRequirement(f *testing.F) {
	f.Add(`nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "x86_64"`)
	f.Add(`triton==3.1.0; platform_system == 'Linux' and platform_machine == 'x86_64' and python_version < '3.13'`)
	f.Add(`x (>=1); (python_full_version >= "3.8.1" or extra not in "a b") and sys.platform ~= "3.1"`)
	f.Add(`a; python_version == "3.*" or python_version === "1.0+local" or python_version < "1.0.dev0"`)
	env := pyspec.Env{"platform_system": "Linux", "platform_machine": "x86_64", "python_version": "3.11", "extra": ""}
	f.Fuzz(func(t *testing.T, line string) {
		r, ok := pyenv.ParseRequirement(line)
		if !ok {
			return
		}
		if r.Name == "" || r.Name != pyenv.NormalizeName(r.Name) {
			t.Fatalf("name %q is not normalized", r.Name)
		}
		applies, known := pyspec.Eval(r.Marker, env)
		if !known && applies {
			t.Fatalf("marker %q: applies although not known", r.Marker)
		}
	})
}
