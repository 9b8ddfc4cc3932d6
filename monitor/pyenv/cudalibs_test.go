package pyenv_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// freshReader is a reader of the real disk with stores of its own: a
// kernel cache counting its reads, and file facts in memory.
func freshReader() (*pyenv.Reader, *fatbin.Cache) {
	c := &fatbin.Cache{}
	return &pyenv.Reader{Kernels: c, Facts: &filefacts.Store{}}, c
}

// TestCUDALibs finds the real libggml-cuda.so, ggml-cuda.dll and a
// source-built torch's libtorch_cuda.so from their packages' RECORDs,
// and a package GPU Canary has never heard of by its RECORD, or without
// one by its folder.
func TestCUDALibs(t *testing.T) {
	lin := fatbintest.MustLoad(fatbintest.LinuxGGML)
	win := fatbintest.MustLoad(fatbintest.WindowsGGML)
	for _, tc := range []struct {
		name  string
		spec  pyenvtest.Spec
		put   map[string]fatbintest.Carved
		extra func(t *testing.T, site string)
		want  []string // package: base name
	}{
		{"llama linux", pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}},
			map[string]fatbintest.Carved{"llama_cpp/lib/libggml-cuda.so": lin}, nil,
			[]string{"llama-cpp-python: libggml-cuda.so"}},
		{"llama windows", pyenvtest.Spec{Layout: pyenv.LayoutWindows, Llama: &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}},
			map[string]fatbintest.Carved{"llama_cpp/lib/ggml-cuda.dll": win}, nil,
			[]string{"llama-cpp-python: ggml-cuda.dll"}},
		{"source torch first", pyenvtest.Spec{
			Torch: &pyenvtest.Torch{DistVersion: "2.6.0a0+gitabc", CUDA: "12.4", Installer: "pip\n", Requires: []string{"filelock"}},
			Llama: &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}},
			map[string]fatbintest.Carved{"torch/lib/libtorch_cuda.so": lin, "torch/lib/libc10_cuda.so": lin, "llama_cpp/lib/libggml-cuda.so": lin},
			func(t *testing.T, site string) {
				// an extension nobody told GPU Canary of, with a RECORD ...
				dist := filepath.Join(site, "my_ext-1.0.dist-info")
				os.MkdirAll(dist, 0o755)
				os.WriteFile(filepath.Join(dist, "METADATA"), []byte("Metadata-Version: 2.1\nName: my-ext\nVersion: 1.0\n"), 0o644)
				os.WriteFile(filepath.Join(dist, "RECORD"), []byte("my_ext/__init__.py,,\n\"my_ext/_C,x.so\",,\nmy_ext-1.0.dist-info/RECORD,,\n"), 0o644)
				os.MkdirAll(filepath.Join(site, "my_ext"), 0o755)
				if err := lin.WriteSparse(filepath.Join(site, "my_ext", "_C,x.so")); err != nil {
					t.Fatal(err)
				}
				// ... and an egg-info one without, found in its folder
				os.MkdirAll(filepath.Join(site, "old_ext-0.1-py3.11.egg-info"), 0o755)
				os.MkdirAll(filepath.Join(site, "old_ext", "lib"), 0o755)
				if err := lin.WriteSparse(filepath.Join(site, "old_ext", "lib", "libold.so.1")); err != nil {
					t.Fatal(err)
				}
			},
			[]string{"torch: libtorch_cuda.so", "torch: libc10_cuda.so", "llama-cpp-python: libggml-cuda.so", "my-ext: _C,x.so", "old-ext: libold.so.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, cache := freshReader()
			root := filepath.Join(t.TempDir(), "venv")
			if err := pyenvtest.Write(root, tc.spec); err != nil {
				t.Fatal(err)
			}
			for rel, c := range tc.put {
				if _, err := pyenvtest.PutRealLibrary(root, tc.spec, rel, c); err != nil {
					t.Fatal(err)
				}
			}
			if tc.extra != nil {
				tc.extra(t, pyenvtest.SitePackages(root, tc.spec))
			}
			env, err := rd.Inspect(root, pyenv.InspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range env.CUDALibs {
				got = append(got, l.Package+": "+filepath.Base(l.File))
				if l.Kernels != fatbintest.GGMLKernels || l.Error != "" {
					t.Errorf("%s: kernels %q, error %q", l.File, l.Kernels, l.Error)
				}
				if k := l.Archs(); k.String() != fatbintest.GGMLKernels {
					t.Errorf("%s: Archs %s", l.File, k)
				}
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("CUDA libraries:\n got %q\nwant %q", got, tc.want)
			}
			if tc.spec.Torch != nil {
				if l := env.TorchCUDALib(); l == nil || filepath.Base(l.File) != "libtorch_cuda.so" {
					t.Errorf("TorchCUDALib = %+v", l)
				}
				if p := env.Torch(); p != nil && len(p.Problems) > 0 {
					t.Errorf("torch problems: %+v", p.Problems)
				}
			}
			// Read again: every library from the cache.
			reads := cache.Reads()
			if _, err := rd.Inspect(root, pyenv.InspectOptions{}); err != nil {
				t.Fatal(err)
			}
			if cache.Reads() != reads {
				t.Errorf("a second Inspect read %d libraries again", cache.Reads()-reads)
			}
		})
	}
}

// TestCUDALibBroken: a CUDA library whose fat binary is cut short is
// listed with why it could not be read, not dropped nor guessed.
func TestCUDALibBroken(t *testing.T) {
	rd, _ := freshReader()
	spec := pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}}
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	path, err := pyenvtest.PutRealLibrary(root, spec, "llama_cpp/lib/libggml-cuda.so", fatbintest.MustLoad(fatbintest.LinuxGGML))
	if err != nil {
		t.Fatal(err)
	}
	// The first container's size, made far larger than the section.
	c := fatbintest.MustLoad(fatbintest.LinuxGGML)
	at := int64(-1)
	for _, r := range c.Ranges {
		if i := bytes.Index(r.Data, []byte{0x50, 0xed, 0x55, 0xba}); i >= 0 {
			at = r.Off + int64(i)
			break
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil || at < 0 {
		t.Fatal(err, at)
	}
	f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}, at+8)
	f.Close()
	env, err := rd.Inspect(root, pyenv.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(env.CUDALibs) != 1 || !strings.Contains(env.CUDALibs[0].Error, "malformed CUDA fat binary") {
		t.Fatalf("CUDA libraries %+v, want the truncated one with its error", env.CUDALibs)
	}
}

// TestCUDALibsReadBudget: reading the environment with the 159 MB
// libggml-cuda.so reads at most 8 MB in all (the kernel's count of this
// process's reads, /proc/self/io rchar).
func TestCUDALibsReadBudget(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/io is Linux's")
	}
	rd, _ := freshReader()
	spec := pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}}
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := pyenvtest.PutRealLibrary(root, spec, "llama_cpp/lib/libggml-cuda.so", fatbintest.MustLoad(fatbintest.LinuxGGML)); err != nil {
		t.Fatal(err)
	}
	before := rchar(t)
	env, err := rd.Inspect(root, pyenv.InspectOptions{})
	read := rchar(t) - before
	if err != nil || len(env.CUDALibs) != 1 {
		t.Fatalf("%v %+v", err, env)
	}
	if read > 8<<20 {
		t.Errorf("reading the environment read %d bytes, over 8 MB", read)
	}
	t.Logf("read %d bytes", read)
}

func rchar(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			var n int64
			for _, c := range v {
				n = n*10 + int64(c-'0')
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}
