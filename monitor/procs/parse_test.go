package procs

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestParseNSpid(t *testing.T) {
	tests := []struct {
		name, status string
		outer, inner int
		ok           bool
	}{
		{"in a container", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t17\n", 4242, 17, true},
		{"nested twice", "NSpid:\t900\t40\t7\n", 900, 7, true},
		{"no namespace", "Name:\tx\nNSpid:\t17\n", 17, 17, true},
		{"old kernel", "Name:\tx\nPid:\t17\n", 0, 0, false},
		{"empty line", "NSpid:\n", 0, 0, false},
		{"garbage", "NSpid:\tabc\t17\n", 0, 0, false},
		{"no newline at end", "NSpid:\t5\t6", 5, 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outer, inner, ok := parseNSpid([]byte(tt.status))
			if outer != tt.outer || inner != tt.inner || ok != tt.ok {
				t.Errorf("parseNSpid(%q) = %d, %d, %v; want %d, %d, %v", tt.status, outer, inner, ok, tt.outer, tt.inner, tt.ok)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	st := parseStatus([]byte("Name:\tpt_main_thread\nUmask:\t0022\nUid:\t1000\t1001\t1001\t1001\nGid:\t100\nNSpid:\t12\n"))
	if st.name != "pt_main_thread" || st.uid != "1000" || !slices.Equal(st.nspid, []int{12}) {
		t.Errorf("parseStatus = %+v", st)
	}
}

func TestParseMaps(t *testing.T) {
	tests := []struct {
		name, maps string
		want       []string
	}{
		{"python with torch", `55d4c8a00000-55d4c8a2c000 r--p 00000000 fd:01 1234   /usr/bin/python3.11
55d4c8a2c000-55d4c8b00000 r-xp 0002c000 fd:01 1234   /usr/bin/python3.11
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
7f1000000000-7f1000100000 r--p 00000000 fd:01 99   /home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so
7f1000100000-7f1000200000 r-xp 00100000 fd:01 99   /home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so
7f2000000000-7f2000001000 r--p 00000000 fd:01 77   /usr/lib/x86_64-linux-gnu/libcuda.so.1 (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7ffd00030000-7ffd00032000 r-xp 00000000 00:00 0                          [vdso]
`, []string{"/usr/bin/python3.11", "/home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}},
		{"repeats apart are listed once", "1-2 r--p 0 fd:01 1 /a/libc.so.6\n2-3 r--p 0 fd:01 2 /b/x.so\n3-4 r-xp 0 fd:01 1 /a/libc.so.6\n",
			[]string{"/a/libc.so.6", "/b/x.so"}},
		{"no trailing newline", "1-2 r--p 0 fd:01 1 /a/libggml-cuda.so", []string{"/a/libggml-cuda.so"}},
		{"anonymous and special only", "1-2 rw-p 0 00:00 0\n3-4 rw-p 0 00:00 0   [heap]\n", nil},
		{"empty", "", nil},
		{"line longer than the buffer is skipped", "1-2 r--p 0 fd:01 1 /" + strings.Repeat("x", 70<<10) + "\n3-4 r--p 0 fd:01 2 /ok.so\n", []string{"/ok.so"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if err := readMaps(strings.NewReader(tt.maps), func(p string) { got = append(got, p) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("paths:\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestEnvOfSitePackages(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", "/home/u/my env/.venv"},
		{"/opt/conda/envs/ml/lib/python3.10/site-packages/llama_cpp/lib/libggml-cuda.so", "/opt/conda/envs/ml"},
		{"/usr/lib/x86_64-linux-gnu/libcuda.so.1", ""},
		// The Windows layout (with / here, so that Linux reads it as a path too).
		{"C:/Users/ada/proj/.venv/Lib/site-packages/torch/lib/torch_cuda.dll", "C:/Users/ada/proj/.venv"},
		{"C:/Users/ada/miniconda3/envs/ml/Lib/site-packages/llama_cpp/lib/ggml-cuda.dll", "C:/Users/ada/miniconda3/envs/ml"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := envOfSitePackages(tt.path); got != filepath.FromSlash(tt.want) {
				t.Errorf("envOfSitePackages(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestRuntimeLib(t *testing.T) {
	tests := []struct {
		path string
		want libKind
	}{
		{"/x/torch/lib/libtorch_cuda.so", libTorchCUDA},
		{`C:\env\Lib\site-packages\torch\lib\torch_cuda.dll`, libTorchCUDA},
		{`C:\env\Lib\site-packages\torch\lib\c10_cuda.dll`, libTorchCUDA},
		{"/x/libc10_cuda.so", libTorchCUDA},
		{"/x/libtorch_cpu.so", libTorchCPU},
		{"/x/libtorch_hip.so", libTorchHIP},
		{"/x/nvidia/cuda_runtime/lib/libcudart.so.12", libCUDART},
		{`C:\x\cudart64_12.dll`, libCUDART},
		{"/usr/lib/x86_64-linux-gnu/libcuda.so.1", libCUDADrv},
		{`C:\Windows\System32\nvcuda.dll`, libCUDADrv},
		{"/x/llama_cpp/lib/libggml-cuda.so", libGGMLCUDA},
		{`C:\x\ggml-cuda.dll`, libGGMLCUDA},
		{"/x/llama_cpp/lib/libllama.so", libGGML},
		{`C:\x\llama.dll`, libGGML},
		{"/x/llama_cpp/lib/libggml-vulkan.so", libGGMLGPU},
		{"/x/onnxruntime/capi/libonnxruntime_providers_cuda.so", libONNXCUDA},
		{`C:\x\onnxruntime_providers_cuda.dll`, libONNXCUDA},
		{"/usr/lib/libc.so.6", 0},
		{"/usr/lib/libcudnn.so.9", 0},
		{"/x/onnxruntime/capi/libonnxruntime_providers_shared.so", 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := runtimeLib(tt.path)
			if got != tt.want || ok != (tt.want != 0) {
				t.Errorf("runtimeLib(%q) = %v, %v; want %v", tt.path, got, ok, tt.want)
			}
			// The byte prefilter must let every runtime through.
			if tt.want != 0 && !strings.Contains(tt.path, `\`) && !mayBeRuntime([]byte(tt.path)) {
				t.Errorf("mayBeRuntime(%q) = false for a runtime", tt.path)
			}
		})
	}
	if mayBeRuntime([]byte("/usr/lib/x86_64-linux-gnu/libc.so.6")) {
		t.Error("mayBeRuntime(libc) = true")
	}
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("7f1000000000-7f1000100000 r--p 00000000 fd:01 99   /a/libtorch_cuda.so\n"))
	f.Add([]byte("x\n\n   \n7f-7f r 0 0 0 /p (deleted)"))
	f.Add([]byte("1-2 r--p 0 fd:01 1 /a\n2-3 r--p 0 fd:01 1 /b\n3-4 r--p 0 fd:01 1 /a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seen := map[string]bool{}
		err := readMaps(strings.NewReader(string(data)), func(p string) {
			if !strings.HasPrefix(p, "/") || seen[p] || strings.HasSuffix(p, "\n") {
				t.Fatalf("bad or repeated path %q", p)
			}
			seen[p] = true
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestParseEnviron(t *testing.T) {
	tests := []struct {
		name            string
		environ         string
		venv, conda, uv string
		cvd             string
		hasCVD          bool
	}{
		{"venv and conda", "HOME=/root\x00VIRTUAL_ENV=/p/.venv\x00CONDA_PREFIX=/opt/conda\x00", "/p/.venv", "/opt/conda", "", "", false},
		{"empty values are unset", "VIRTUAL_ENV=\x00CONDA_PREFIX=\x00UV_PROJECT_ENVIRONMENT=\x00", "", "", "", "", false},
		{"an empty CUDA_VISIBLE_DEVICES hides every GPU", "CUDA_VISIBLE_DEVICES=\x00", "", "", "", "", true},
		{"CUDA_VISIBLE_DEVICES, no NUL at the end", "CUDA_VISIBLE_DEVICES=1,0", "", "", "", "1,0", true},
		{"a name that only starts alike", "VIRTUAL_ENV_PROMPT=(x)\x00", "", "", "", "", false},
		{"nothing", "", "", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := parseEnviron([]byte(tt.environ))
			if string(v.virtualEnv) != tt.venv || string(v.condaPrefix) != tt.conda ||
				string(v.cudaVisibleDevices) != tt.cvd || v.hasCUDAVisibleDevices != tt.hasCVD {
				t.Errorf("parseEnviron(%q) = %+v", tt.environ, v)
			}
		})
	}
}

// TestEnvironOfUTF16: a Windows environment block reads as Linux's
// environ does, with variable names upper-cased (Windows ignores their
// case).
func TestEnvironOfUTF16(t *testing.T) {
	block := utf16.Encode([]rune("=C:=C:\\work\x00Virtual_Env=C:\\Users\\Ada\\Проект\\.venv\x00cuda_visible_devices=\x00" +
		"__PYVENV_LAUNCHER__=C:\\p\\.venv\\Scripts\\python.exe\x00Path=C:\\Windows\x00\x00GARBAGE=after the end\x00"))
	got := environOfUTF16(block)
	want := "=C:=C:\\work\x00VIRTUAL_ENV=C:\\Users\\Ada\\Проект\\.venv\x00CUDA_VISIBLE_DEVICES=\x00" +
		"__PYVENV_LAUNCHER__=C:\\p\\.venv\\Scripts\\python.exe\x00PATH=C:\\Windows\x00"
	if string(got) != want {
		t.Fatalf("environOfUTF16 = %q\nwant %q", got, want)
	}
	v := parseEnviron(got)
	if string(v.virtualEnv) != `C:\Users\Ada\Проект\.venv` || !v.hasCUDAVisibleDevices || len(v.cudaVisibleDevices) != 0 ||
		string(v.pyvenvLauncher) != `C:\p\.venv\Scripts\python.exe` {
		t.Errorf("parseEnviron = %+v", v)
	}
	for _, b := range [][]uint16{nil, {0}, utf16.Encode([]rune("A=1"))} {
		if got := environOfUTF16(b); len(b) > 1 && string(got) != "A=1\x00" || len(b) <= 1 && len(got) != 0 {
			t.Errorf("environOfUTF16(%v) = %q", b, got)
		}
	}
}

// TestAttributeByInterpreter: without VIRTUAL_ENV or CONDA_PREFIX, the
// environment is the one the program on the command line lives in, else
// the one its executable image does (Windows knows it), else the one
// __PYVENV_LAUNCHER__ names (the base interpreter a venv's redirector
// started on Windows).
func TestAttributeByInterpreter(t *testing.T) {
	dir := t.TempDir()
	mk := func(env string, conda bool) string {
		env = filepath.Join(dir, env)
		marker, data := filepath.Join(env, "pyvenv.cfg"), []byte("home = /usr/bin\n")
		if conda {
			marker, data = filepath.Join(env, "conda-meta", "history"), nil
		}
		if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(marker, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return env
	}
	posix, win, conda, launched := mk("posix", false), mk("win", false), mk("conda", true), mk("launched", false)
	base := filepath.Join(dir, "base", "python.exe") // a base interpreter: no environment
	tests := []struct {
		name     string
		argv     []string
		exe      string
		environ  string
		wantPath string
	}{
		{"ENV/bin/python3.11", []string{filepath.Join(posix, "bin", "python3.11"), "train.py"}, "", "", posix},
		{`ENV\Scripts\python.exe`, []string{filepath.Join(win, "Scripts", "python.exe")}, "", "", win},
		{"a conda environment's python.exe", []string{filepath.Join(conda, "python.exe")}, "", "", conda},
		{"the image when the command line names no path", []string{"python", "train.py"}, filepath.Join(win, "Scripts", "python.exe"), "", win},
		{"the command line before the image", []string{filepath.Join(posix, "bin", "python")}, filepath.Join(win, "Scripts", "python.exe"), "", posix},
		{"__PYVENV_LAUNCHER__", []string{base, "train.py"}, base, "__PYVENV_LAUNCHER__=" + filepath.Join(launched, "Scripts", "python.exe"), launched},
		{"VIRTUAL_ENV before all", []string{filepath.Join(posix, "bin", "python")}, "", "VIRTUAL_ENV=" + win, win},
		{"not an interpreter", []string{filepath.Join(win, "Scripts", "pip.exe")}, "", "", ""},
		{"nothing at all", nil, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Proc{Cmdline: tt.argv, Exe: tt.exe}
			attributeByEnviron(&p, parseEnviron([]byte(tt.environ)))
			if p.EnvPath != tt.wantPath {
				t.Errorf("env = %q via %q, want %q", p.EnvPath, p.EnvVia, tt.wantPath)
			}
		})
	}
}

func TestTargetValues(t *testing.T) {
	environ := "HOME=/root\x00VIRTUAL_ENV=/p/.venv\x00UV_PROJECT_ENVIRONMENT=/srv/env\x00CONDA_PREFIX=\x00VIRTUAL_ENV_PROMPT=(x)\x00CONDA_PREFIX_1=/opt/conda"
	if got := targetValues([]byte(environ)); !slices.Equal(got, []string{"/p/.venv", "/srv/env"}) {
		t.Errorf("targetValues = %q", got)
	}
}

func TestParseStat(t *testing.T) {
	st, err := parseStat([]byte("4242 (python3 (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 1000 500 0 0 20 0 1 0 12345 1000 100 18446744073709551615\n"))
	if err != nil || st.comm != "python3 (x) y" || st.state != 'S' || st.ppid != 1 || st.ticks != 1500 || st.start != 12345 || st.vsize != 1000 || st.rss != 100 {
		t.Errorf("parseStat = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "4242 python3 S 1", "4242 (python3) S 1 2 3"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) did not fail", bad)
		}
	}
}

// readMaps streams the file paths mapped in a /proc/PID/maps file, each
// once, in the order first seen. Anonymous and special mappings ([heap],
// [stack], [vdso]) are skipped, and a " (deleted)" suffix is dropped.
func readMaps(r io.Reader, fn func(path string)) error {
	seen := map[string]bool{}
	return parseMaps(bufio.NewReaderSize(r, 64<<10), func(p []byte) {
		if !seen[string(p)] {
			s := string(p)
			seen[s] = true
			fn(s)
		}
	})
}

// parseNSpid reads the NSpid line of /proc/PID/status and returns the PID
// in the namespace of the proc mount it was read from (the first entry)
// and the PID inside the process's own namespace (the last). ok is false
// without a well-formed NSpid line (kernels before 4.1).
func parseNSpid(status []byte) (outer, inner int, ok bool) {
	ns := parseStatus(status).nspid
	if len(ns) == 0 {
		return 0, 0, false
	}
	return ns[0], ns[len(ns)-1], true
}
