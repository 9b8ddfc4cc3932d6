package pyspec_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\nRequires-Dist: a\n\nbody"))
	f.Add([]byte("Version:\n"))
	f.Add([]byte("\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		m, err := pyspec.ParseMetadata(cr)
		if cr.n > pyspec.MetadataLimit {
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
		r, ok := pyspec.ParseRequirement(line)
		if !ok {
			return
		}
		if r.Name == "" || r.Name != pyspec.NormalizeName(r.Name) {
			t.Fatalf("name %q is not normalized", r.Name)
		}
		applies, known := pyspec.Eval(r.Marker, env)
		if !known && applies {
			t.Fatalf("marker %q: applies although not known", r.Marker)
		}
	})
}
