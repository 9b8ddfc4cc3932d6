package pyspec_test

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// countingReader counts the bytes a parser pulled from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endless is an infinite stream of one byte, a METADATA that never ends.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func TestParseMetadata(t *testing.T) {
	const header = "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu121\nRequires-Dist: filelock\nRequires-Dist: nvidia-cublas-cu12==12.1.3.1; platform_system == \"Linux\"\nLicense: BSD\n  continued line: Version: 9\n"
	tests := []struct {
		name    string
		r       io.Reader
		want    pyspec.Metadata
		wantErr error
		maxRead int64
	}{
		{
			name: "header and body",
			r:    strings.NewReader(header + "\nVersion: 0.0.0 in the body\n"),
			want: pyspec.Metadata{Name: "torch", Version: "2.5.1+cu121", RequiresDist: []string{"filelock", `nvidia-cublas-cu12==12.1.3.1; platform_system == "Linux"`}},
		},
		{
			name:    "50 MB body is not read",
			r:       io.MultiReader(strings.NewReader(header+"\n"), io.LimitReader(endless('x'), 50<<20)),
			want:    pyspec.Metadata{Name: "torch", Version: "2.5.1+cu121", RequiresDist: []string{"filelock", `nvidia-cublas-cu12==12.1.3.1; platform_system == "Linux"`}},
			maxRead: 64 << 10,
		},
		{
			name:    "endless header stops at the limit",
			r:       io.MultiReader(strings.NewReader("Name: torch\nDescription: "), endless('y')),
			want:    pyspec.Metadata{Name: "torch", Truncated: true},
			wantErr: pyspec.ErrNoMetadataVersion,
			maxRead: pyspec.MetadataLimit,
		},
		{
			name: "CRLF and no trailing newline",
			r:    strings.NewReader("Name: x\r\nVersion: 1.0\r\nRequires-Dist: y"),
			want: pyspec.Metadata{Name: "x", Version: "1.0", RequiresDist: []string{"y"}},
		},
		{name: "empty", r: strings.NewReader(""), wantErr: pyspec.ErrNoMetadataVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &countingReader{r: tt.r}
			got, err := pyspec.ParseMetadata(cr)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if tt.maxRead > 0 && cr.n > tt.maxRead {
				t.Errorf("read %d bytes, want at most %d", cr.n, tt.maxRead)
			}
		})
	}
}

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"llama_cpp_python": "llama-cpp-python", "Torch": "torch", "nvidia_cublas_cu12": "nvidia-cublas-cu12",
		"a.-_b": "a-b", "_x_": "-x-",
	} {
		if got := pyspec.NormalizeName(in); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", in, got, want)
		}
	}
}
