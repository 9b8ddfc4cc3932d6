package fixplan

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestLlamaPlan is the repair of a llama-cpp-python CPU build: its own
// release from the newest CUDA wheel index the driver supports, forced
// without dependencies, by the installer torch's repair would use; where
// no wheel fits, a blocked plan that says why and gives the build from
// source by hand. ENV stands for the environment's path.
func TestLlamaPlan(t *testing.T) {
	cpuLlama := func(v string) *pyenvtest.Llama { return &pyenvtest.Llama{Version: v, Backends: []string{"cpu"}} }
	noUV := func(name string) (string, error) {
		if name == "uv" {
			return "", errors.New("not found")
		}
		return name, nil
	}
	driver535 := gpu.State{Driver: "535.54.03", CUDADriver: "12.2", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
	driver470 := gpu.State{Driver: "470.82.01", CUDADriver: "11.4", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
	for _, tc := range []struct {
		name     string
		spec     pyenvtest.Spec
		gpu      gpu.State
		look     func(string) (string, error)
		platform string
		base     string
		want     string // the command, or on a blocked plan its Manual
		blocked  string // in Blocked
		variant  string
	}{
		{name: "pip venv, driver 12.4", spec: pyenvtest.Spec{Llama: cpuLlama("0.3.4")}, gpu: a100Driver550, variant: "cu124",
			want: "ENV/bin/python -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.4 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"},
		{name: "a mirror", spec: pyenvtest.Spec{Llama: cpuLlama("0.3.4")}, gpu: a100Driver550, base: "http://127.0.0.1:9/whl/", variant: "cu124",
			want: "ENV/bin/python -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.4 --index-url http://127.0.0.1:9/whl/cu124"},
		{name: "driver 12.2 takes cu122", spec: pyenvtest.Spec{Llama: cpuLlama("0.3.4")}, gpu: driver535, variant: "cu122",
			want: "ENV/bin/python -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.4 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu122"},
		{name: "uv venv, uv found", spec: pyenvtest.Spec{Manager: "uv", Llama: cpuLlama("0.3.4")}, gpu: a100Driver550, variant: "cu124",
			want: "uv pip install --python ENV --reinstall --no-deps llama-cpp-python==0.3.4 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"},
		{name: "uv venv, uv not on PATH: the host's pip aims at it", spec: pyenvtest.Spec{Manager: "uv", Llama: cpuLlama("0.3.4")}, gpu: a100Driver550, look: noUV, variant: "cu124",
			want: "python3 -m pip --python ENV/bin/python install --force-reinstall --no-deps llama-cpp-python==0.3.4 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"},
		{name: "driver too old: built from source", spec: pyenvtest.Spec{Llama: cpuLlama("0.3.4")}, gpu: driver470, blocked: "older than the oldest CUDA wheel",
			want: `CMAKE_ARGS="-DGGML_CUDA=on" ENV/bin/python -m pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python==0.3.4`},
		{name: "macOS has no CUDA wheels", spec: pyenvtest.Spec{Llama: cpuLlama("0.3.4")}, gpu: a100Driver550, platform: "darwin-arm64", blocked: "no CUDA wheels for darwin-arm64",
			want: `CMAKE_ARGS="-DGGML_CUDA=on" ENV/bin/python -m pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python==0.3.4`},
		{name: "Windows before its wheels", spec: pyenvtest.Spec{Layout: pyenv.LayoutWindows, Llama: cpuLlama("0.3.4")}, gpu: a100Driver550, platform: kb.PlatformWindows,
			blocked: "older than its first CUDA wheel for windows-x86_64",
			want:    `$env:CMAKE_ARGS = "-DGGML_CUDA=on"; PYTHON -m pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python==0.3.4`},
		{name: "uv's source build", spec: pyenvtest.Spec{Manager: "uv", Llama: cpuLlama("0.3.4")}, gpu: driver470, blocked: "CUDA toolkit",
			want: `CMAKE_ARGS="-DGGML_CUDA=on" uv pip install --python ENV --reinstall --no-deps --no-cache llama-cpp-python==0.3.4`},
		{name: "no driver", spec: pyenvtest.Spec{Llama: cpuLlama("0.3.4")}, gpu: noDriver, blocked: "no NVIDIA driver answered",
			want: `CMAKE_ARGS="-DGGML_CUDA=on" ENV/bin/python -m pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python==0.3.4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			if err := pyenvtest.Write(root, tc.spec); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			look := tc.look
			if look == nil {
				look = onPath
			}
			p, err := NewLlamaPlan(Request{Env: env, GPU: tc.gpu, LookPath: look, WheelPlatform: tc.platform, LlamaIndexBase: tc.base})
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(strings.ReplaceAll(tc.want, "PYTHON", env.Interpreter()), "ENV", env.Path)
			got := p.Command()
			if tc.blocked != "" {
				got = p.Manual
				if !strings.Contains(p.Blocked, tc.blocked) || len(p.Argv) != 0 {
					t.Errorf("blocked %q, argv %q; want %q", p.Blocked, p.Argv, tc.blocked)
				}
			} else if p.Blocked != "" || p.Variant != tc.variant || p.Package != pyenv.LlamaCppPython || !p.Clears(finding.CodeLlamaCPPCPUBuild) || p.Clears(finding.CodeTorchCPUBuild) {
				t.Errorf("plan %+v", p)
			}
			if got != want {
				t.Errorf("command\n  %q\nwant\n  %q", got, want)
			}
			if tc.platform == "" {
				// The advice is the plan's, blocked or not.
				if a := (Advice{LookPath: look, LlamaIndexBase: tc.base}).Fix(env, tc.gpu, finding.CodeLlamaCPPCPUBuild); a != want {
					t.Errorf("advice %q, want the plan's %q", a, want)
				}
			}
		})
	}
	t.Run("no llama-cpp-python", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "env")
		if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu"}}); err != nil {
			t.Fatal(err)
		}
		env, err := pyenv.Inspect(root)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewLlamaPlan(Request{Env: env, GPU: a100Driver550}); !errors.Is(err, ErrNoLlama) {
			t.Errorf("err %v, want ErrNoLlama", err)
		}
	})
}
