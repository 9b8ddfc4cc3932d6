package wheeltest

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRealPipInstallsFromIndex proves the wheels and the index are good
// enough for real pip: the other tests depend on it.
func TestRealPipInstallsFromIndex(t *testing.T) {
	py := Python(t)
	idx := NewIndex(t.TempDir())
	for _, s := range []Spec{Torch("2.5.1", "cu121"), Companion("torchvision", "0.20.1", "cu121")} {
		if err := idx.Add("cu121", s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	defer srv.Close()

	venv := filepath.Join(t.TempDir(), "my env")
	NewVenv(t, py, venv)
	Pip(t, py, venv, "install", "--index-url", srv.URL+"/cu121", "torch==2.5.1+cu121", "torchvision")

	site := SitePackages(t, venv)
	for _, f := range []string{"torch/lib/libtorch_cuda.so", "torch/version.py", "torch-2.5.1+cu121.dist-info/METADATA", "torch-2.5.1+cu121.dist-info/INSTALLER", "torchvision/version.py"} {
		if _, err := os.Stat(filepath.Join(site, f)); err != nil {
			t.Errorf("after pip install: %v", err)
		}
	}
	v, _ := os.ReadFile(filepath.Join(site, "torch/version.py"))
	if !strings.Contains(string(v), "cuda: Optional[str] = '12.1'") {
		t.Errorf("torch/version.py:\n%s", v)
	}
	if idx.Requests() != 2 {
		t.Errorf("index served %d files, want 2", idx.Requests())
	}
}

func TestCudaOf(t *testing.T) {
	for tag, want := range map[string]string{"cu121": "12.1", "cu118": "11.8", "cu130": "13.0", "cpu": "", "rocm6.2": ""} {
		if got := cudaOf(tag); got != want {
			t.Errorf("cudaOf(%q) = %q, want %q", tag, got, want)
		}
	}
}

// TestTorchOfEveryBuild: a torch wheel carries what the rules read for its
// build: version.py's cuda, hip or xpu, and the matching torch/lib library.
func TestTorchOfEveryBuild(t *testing.T) {
	tests := []struct {
		tag, versionPy, lib string
	}{
		{"cu124", "cuda: Optional[str] = '12.4'", "torch/lib/libtorch_cuda.so"},
		{"rocm6.2", "hip: Optional[str] = '6.2.00000-0000000'", "torch/lib/libtorch_hip.so"},
		{"xpu", "xpu: Optional[str] = '20250101'", "torch/lib/libtorch_xpu.so"},
		{"cpu", "cuda: Optional[str] = None\ngit_version = '0000000000000000000000000000000000000000'\nhip: Optional[str] = None\nxpu: Optional[str] = None", "torch/lib/libtorch_cpu.so"},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			data, err := Build(Torch("2.5.1", tt.tag))
			if err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
				if f.Name != "torch/version.py" {
					continue
				}
				r, _ := f.Open()
				b, _ := io.ReadAll(r)
				r.Close()
				if !strings.Contains(string(b), tt.versionPy) || !strings.Contains(string(b), "__version__ = '2.5.1+"+tt.tag+"'") {
					t.Errorf("torch/version.py:\n%s", b)
				}
			}
			if !slices.Contains(names, tt.lib) {
				t.Errorf("files %v lack %s", names, tt.lib)
			}
		})
	}
}
