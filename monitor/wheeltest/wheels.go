// Package wheeltest builds small but well-formed wheels of torch and its
// companions, and serves them as a download.pytorch.org-style index
// (BASE/TAG/PROJECT/), so tests can run real pip against them: PyPI is not
// reachable from the machines the tests run on, and real torch wheels are
// gigabytes.
package wheeltest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec describes one wheel.
type Spec struct {
	// Name is the distribution: torch, torchvision, torchaudio,
	// llama-cpp-python.
	Name string
	// Dir is the package's folder in site-packages; "" is Name
	// (llama_cpp for llama-cpp-python: Llama).
	Dir string
	// Version is the full version, with its local tag ("2.5.1+cu121").
	Version string
	// CUDA is version.py's cuda ("12.1"); "" writes None.
	CUDA string
	// HIP and XPU are torch's version.py hip ("6.2.41133") and xpu
	// ("20250101") of a ROCm or XPU build; "" writes None.
	HIP, XPU string
	// Libs are extra files under NAME/lib (libtorch_cuda.so); torch gets
	// libtorch_cpu.so always, and libtorch_cuda.so, libtorch_hip.so or
	// libtorch_xpu.so by its build.
	Libs []string
	// Size pads the wheel with an incompressible file of about this many
	// bytes, so an install takes long enough to be interrupted.
	Size int
	// Runtime are the NVIDIA runtime wheels it requires (Torch fills a
	// CUDA build's: runtime.go): its METADATA names each, pinned, with
	// the marker real torch wheels carry, and Write and Index.Add put
	// them beside it.
	Runtime []Spec
	// Block names a file (relative to site-packages, outside NAME/) that
	// the wheel installs after NAME's files and before its dist-info: an
	// installer run under HoldInstall stops when it opens it, after it
	// moved the old version aside, the one moment an interruption leaves
	// an environment half-installed. pip extracts a wheel's files in the
	// archive's order.
	Block string
	// BlockFirst puts Block before NAME's files instead: an installer
	// held there has moved the old version aside and written nothing of
	// the new one, so an interruption leaves no NAME at all.
	BlockFirst bool
	// Requires are more Requires-Dist lines ("torch==2.6.0"): a package
	// that asks for another torch, as a custom node does.
	Requires []string
}

// Filename is the wheel's file name (py3-none-any: it installs anywhere),
// its name escaped as the wheel spec asks (nvidia_cublas_cu12-…).
func (s Spec) Filename() string {
	return fmt.Sprintf("%s-%s-py3-none-any.whl", s.escapedName(), strings.ReplaceAll(s.Version, "-", "_"))
}

// escapedName is the name as wheel and dist-info names write it.
func (s Spec) escapedName() string { return strings.ReplaceAll(s.Name, "-", "_") }

// Torch is a torch wheel for an index tag: "cu121" gives 2.5.1+cu121 with
// cuda '12.1' and libtorch_cuda.so, requiring its NVIDIA runtime wheels
// from 2.2 on (Spec.Runtime); "rocm6.2" a ROCm build (hip set,
// libtorch_hip.so), "xpu" an XPU build, "cpu" a CPU build.
func Torch(version, tag string) Spec {
	s := Spec{Name: "torch", Version: version + "+" + tag, CUDA: cudaOf(tag)}
	s.Runtime = runtimeOf(version, s.CUDA)
	switch {
	case strings.HasPrefix(tag, "rocm"):
		s.HIP = strings.TrimPrefix(tag, "rocm") + ".00000-0000000"
	case tag == "xpu":
		s.XPU = "20250101"
	}
	return s
}

// Companion is torchvision or torchaudio for an index tag.
func Companion(name, version, tag string) Spec {
	return Spec{Name: name, Version: version + "+" + tag, CUDA: cudaOf(tag)}
}

// Llama is a llama-cpp-python wheel in the layout of 0.3.2 and later:
// llama_cpp/lib holds libllama, libggml, libggml-base and one
// libggml-BACKEND library per backend ("cpu", "cuda"), as pyenv tells a
// CUDA build from a CPU one. Its version has no local tag, as the wheels
// of llama-cpp-python's own CUDA indexes have none.
func Llama(version string, backends ...string) Spec {
	s := Spec{Name: "llama-cpp-python", Dir: "llama_cpp", Version: version,
		Libs: []string{"libllama.so", "libggml.so", "libggml-base.so"}}
	for _, b := range backends {
		s.Libs = append(s.Libs, "libggml-"+b+".so")
	}
	return s
}

func cudaOf(tag string) string {
	if !strings.HasPrefix(tag, "cu") || len(tag) < 5 {
		return ""
	}
	d := tag[2:]
	return d[:len(d)-1] + "." + d[len(d)-1:]
}

// Write builds the wheel into dir, with the stub wheels of the NVIDIA
// runtime it requires beside it (Spec.Runtime) as download.pytorch.org's
// index holds them beside torch, so that a --find-links folder of them
// satisfies real pip; it returns the wheel's path.
func Write(dir string, s Spec) (string, error) {
	for _, r := range s.Runtime {
		if _, err := os.Stat(filepath.Join(dir, r.Filename())); err == nil {
			continue
		}
		if _, err := writeOne(dir, r); err != nil {
			return "", err
		}
	}
	return writeOne(dir, s)
}

func writeOne(dir string, s Spec) (string, error) {
	data, err := Build(s)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, s.Filename())
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("writing wheel %s: %w", path, err)
	}
	return path, nil
}

// file is one member of a wheel.
type file struct {
	name string
	data []byte
}

// Build returns the wheel's bytes.
func Build(s Spec) ([]byte, error) {
	pkg := s.Name
	if s.Dir != "" {
		pkg = s.Dir
	}
	distInfo := fmt.Sprintf("%s-%s.dist-info", s.escapedName(), s.Version)
	files := []file{
		{pkg + "/__init__.py", []byte("from .version import __version__\n")},
		{pkg + "/version.py", versionPy(s)},
	}
	if short, ok := strings.CutPrefix(s.Name, "nvidia-"); ok {
		// A runtime stub: nvidia/<lib>/lib holds its library, as NVIDIA's
		// wheels lay it out.
		pkg = "nvidia/" + stubDir(short)
		files = []file{{pkg + "/__init__.py", nil}}
	}
	libs := s.Libs
	if s.Name == "torch" {
		libs = append([]string{"libtorch_cpu.so", "libc10.so"}, libs...)
		switch {
		case s.CUDA != "":
			libs = append(libs, "libtorch_cuda.so", "libc10_cuda.so")
		case s.HIP != "":
			libs = append(libs, "libtorch_hip.so", "libc10_hip.so")
		case s.XPU != "":
			libs = append(libs, "libtorch_xpu.so", "libc10_xpu.so")
		}
	}
	for _, l := range libs {
		files = append(files, file{pkg + "/lib/" + l, []byte("\x7fELF fixture " + l + "\n")})
	}
	if s.Size > 0 {
		pad := make([]byte, s.Size)
		seed := sha256.Sum256([]byte(s.Version))
		for i := 0; i < len(pad); i += len(seed) {
			seed = sha256.Sum256(seed[:])
			copy(pad[i:], seed[:])
		}
		files = append(files, file{pkg + "/lib/padding.bin", pad})
	}
	if s.Block != "" && s.BlockFirst {
		files = append([]file{{s.Block, []byte("unblocked\n")}}, files...)
	}
	if s.Block != "" && !s.BlockFirst {
		files = append(files, file{s.Block, []byte("unblocked\n")})
	}
	files = append(files,
		file{distInfo + "/METADATA", metadata(s)},
		file{distInfo + "/WHEEL", []byte("Wheel-Version: 1.0\nGenerator: gpucanary-tests\nRoot-Is-Purelib: false\nTag: py3-none-any\n")},
		file{distInfo + "/top_level.txt", []byte(strings.SplitN(pkg, "/", 2)[0] + "\n")},
	)
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			return nil, fmt.Errorf("building wheel %s: %w", s.Filename(), err)
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, fmt.Errorf("building wheel %s: %w", s.Filename(), err)
		}
		sum := sha256.Sum256(f.data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", distInfo)
	w, err := zw.Create(distInfo + "/RECORD")
	if err != nil {
		return nil, fmt.Errorf("building wheel %s: %w", s.Filename(), err)
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		return nil, fmt.Errorf("building wheel %s: %w", s.Filename(), err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("building wheel %s: %w", s.Filename(), err)
	}
	return buf.Bytes(), nil
}

// versionPy is NAME/version.py in the form torch 2.6+ writes.
func versionPy(s Spec) []byte {
	literal := func(v string) string {
		if v == "" {
			return "None"
		}
		return "'" + v + "'"
	}
	cuda := literal(s.CUDA)
	if s.Name != "torch" {
		return []byte(fmt.Sprintf("__version__ = '%s'\ngit_version = '0000000'\nfrom torch.torch_version import TorchVersion\ncuda = %s\n", s.Version, cuda))
	}
	return []byte(fmt.Sprintf(`from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '%s'
debug = False
cuda: Optional[str] = %s
git_version = '0000000000000000000000000000000000000000'
hip: Optional[str] = %s
xpu: Optional[str] = %s
`, s.Version, cuda, literal(s.HIP), literal(s.XPU)))
}

func metadata(s Spec) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: test fixture of %s\nRequires-Python: >=3.8\n", s.Name, s.Version, s.Name)
	// Only dependencies the test index can satisfy (it serves the runtime
	// stubs beside torch): real torch's filelock, sympy, … would send pip
	// to PyPI.
	if s.Name == "torchvision" || s.Name == "torchaudio" {
		b.WriteString("Requires-Dist: torch\n")
	}
	for _, r := range s.Requires {
		b.WriteString("Requires-Dist: " + r + "\n")
	}
	for _, r := range s.Runtime {
		b.WriteString("Requires-Dist: " + r.Name + "==" + r.Version + runtimeMarker + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String())
}
