package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// sim5090 is an RTX 5090 (sm_120) on driver 570, which runs CUDA 12.8.
const sim5090 = `{"driver": "570.86.10", "cuda_driver": "12.8",
 "devices": [{"name": "NVIDIA GeForce RTX 5090", "uuid": "GPU-5090", "compute_capability": "12.0",
              "memory_total_bytes": 34190917632, "processes": []}]}`

// TestCheckComfyUIPortable: `gpucanary check` with no path finds
// ComfyUI's portable release unpacked on the Desktop, reads its embedded
// Python's torch 2.7.0+cu128 as one that runs on an RTX 5090 with driver
// 570, and names the app; with a CPU torch there it is TORCH_CPU_BUILD,
// repaired by the embedded Python's own pip.
func TestCheckComfyUIPortable(t *testing.T) {
	cases := []struct {
		name     string
		torch    *pyenvtest.Torch
		wantCode int
	}{
		{"cu128", &pyenvtest.Torch{DistVersion: "2.7.0+cu128", CUDA: "12.8", Installer: "pip"}, 0},
		{"cpu", &pyenvtest.Torch{DistVersion: "2.7.0+cpu", Installer: "pip"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", "1")
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			home := t.TempDir()
			t.Setenv("HOME", home)
			for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_EXE", "PYENV_ROOT", "WORKON_HOME", "PYTHONUSERBASE"} {
				t.Setenv(v, "")
			}
			t.Chdir(t.TempDir())
			env, err := pyenvtest.ComfyUIPortable(filepath.Join(home, "Desktop", "ComfyUI_windows_portable"),
				pyenvtest.Spec{Python: "3.12", Torch: c.torch})
			if err != nil {
				t.Fatal(err)
			}
			sim := simFile(t, sim5090)
			out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", "--json")
			var r struct {
				Envs []struct {
					Path, Kind, Python, Layout, Installer, App, Verdict string
					Packages                                            map[string]struct{ Version, Build, CUDA string }
					Findings                                            []struct{ Code, Severity, Fix string }
				}
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %s %s", err, out, stderr)
			}
			found := false
			for _, e := range r.Envs {
				if e.Path != env {
					continue
				}
				found = true
				if e.Kind != "embedded" || e.Python != "3.12" || e.Layout != "windows" || e.App != "ComfyUI portable" {
					t.Errorf("env = %+v", e)
				}
				if tp := e.Packages["torch"]; tp.Version != c.torch.DistVersion {
					t.Errorf("torch = %+v", tp)
				}
				switch c.name {
				case "cu128":
					if e.Verdict != "ok" {
						t.Errorf("verdict %s", e.Verdict)
					}
					for _, f := range e.Findings {
						if f.Severity == "error" || f.Severity == "warning" {
							t.Errorf("finding %+v on a torch that runs", f)
						}
					}
				case "cpu":
					py := filepath.Join(env, "python.exe")
					if len(e.Findings) == 0 || e.Findings[0].Code != "TORCH_CPU_BUILD" ||
						!strings.HasPrefix(e.Findings[0].Fix, py+" -s -m pip install ") || !strings.Contains(e.Findings[0].Fix, "torch==2.7.0+cu128") {
						t.Errorf("findings = %+v", e.Findings)
					}
				}
			}
			// the exit status is the machine's too (its own /usr may hold a torch)
			if !found || c.wantCode != 0 && code != c.wantCode {
				t.Errorf("exit %d (want %d), %s found = %v\n%s\n%s", code, c.wantCode, env, found, out, stderr)
			}
			text, _, _ := runCLI(t, "--gpu-sim", sim, "check", env)
			if !strings.Contains(text, "(ComfyUI portable, embedded, Python 3.12, Windows layout)") {
				t.Errorf("check does not name the app:\n%s", text)
			}
		})
	}
}
