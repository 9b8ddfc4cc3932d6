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
// enough for real pip: the other tests depend on it. A CUDA torch brings
// its NVIDIA runtime stubs from the same index, as pytorch.org's does.
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
	for _, f := range []string{"torch/lib/libtorch_cuda.so", "torch/version.py", "torch-2.5.1+cu121.dist-info/METADATA", "torch-2.5.1+cu121.dist-info/INSTALLER", "torchvision/version.py",
		"nvidia/cublas/lib/libcublas.so.12", "nvidia_cublas_cu12-12.1.4.1.dist-info/METADATA", "nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cuda_runtime/lib/libcudart.so.12", "nvidia/nccl/lib/libnccl.so.2"} {
		if _, err := os.Stat(filepath.Join(site, f)); err != nil {
			t.Errorf("after pip install: %v", err)
		}
	}
	v, _ := os.ReadFile(filepath.Join(site, "torch/version.py"))
	if !strings.Contains(string(v), "cuda: Optional[str] = '12.1'") {
		t.Errorf("torch/version.py:\n%s", v)
	}
	if idx.Requests() != 6 {
		t.Errorf("index served %d files, want 6 (torch, torchvision and four runtime wheels)", idx.Requests())
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

// TestTorchRequiresItsRuntime: a CUDA torch wheel from 2.2 on names its
// NVIDIA runtime in METADATA as real ones do (pinned, behind the Linux
// x86_64 marker; CUDA 13's mostly unsuffixed), and Write puts the stubs
// beside it; CPU builds and older CUDA builds require none.
func TestTorchRequiresItsRuntime(t *testing.T) {
	tests := []struct {
		version, tag string
		requires     []string
	}{
		{"2.5.1", "cu124", []string{
			`nvidia-cuda-runtime-cu12==12.4.77; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cublas-cu12==12.4.4.1; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-nccl-cu12==2.21.5; platform_system == "Linux" and platform_machine == "x86_64"`}},
		{"2.7.1", "cu118", []string{
			`nvidia-cuda-runtime-cu11==11.8.77; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cublas-cu11==11.8.4.1; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cudnn-cu11==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-nccl-cu11==2.21.5; platform_system == "Linux" and platform_machine == "x86_64"`}},
		{"2.9.1", "cu130", []string{
			`nvidia-cuda-runtime==13.0.77; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cublas==13.0.4.1; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cudnn-cu13==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-nccl-cu13==2.21.5; platform_system == "Linux" and platform_machine == "x86_64"`}},
		{"2.5.1", "cpu", nil},
		{"2.1.2", "cu121", nil},
		{"1.13.1", "cu117", nil},
	}
	for _, tt := range tests {
		t.Run(tt.version+"+"+tt.tag, func(t *testing.T) {
			dir := t.TempDir()
			s := Torch(tt.version, tt.tag)
			path, err := Write(dir, s)
			if err != nil {
				t.Fatal(err)
			}
			meta := readMember(t, path, "torch-"+s.Version+".dist-info/METADATA")
			var got []string
			for _, l := range strings.Split(meta, "\n") {
				if r, ok := strings.CutPrefix(l, "Requires-Dist: "); ok {
					got = append(got, r)
				}
			}
			if !slices.Equal(got, tt.requires) {
				t.Errorf("Requires-Dist =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.requires, "\n"))
			}
			wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
			if len(wheels) != 1+len(tt.requires) {
				t.Errorf("Write left %d wheels, want torch and %d runtime stubs: %v", len(wheels), len(tt.requires), wheels)
			}
		})
	}
}

// readMember is one file of a wheel.
func readMember(t *testing.T, wheel, name string) string {
	t.Helper()
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			r, _ := f.Open()
			b, _ := io.ReadAll(r)
			r.Close()
			return string(b)
		}
	}
	t.Fatalf("%s has no %s", wheel, name)
	return ""
}
