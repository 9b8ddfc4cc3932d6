package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const simA100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}`

// incidentSpecs are environments of DESIGN.md's incidents, by name.
var incidentSpecs = []struct {
	name string
	spec pyenvtest.Spec
}{
	{"good-cu121", pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "uv"},
		Vision: &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"}}},
	{"uv-cpu-overwrite", pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}}},
	{"llama-cpu", pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"},
		Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cpu"}}}},
	{"windows-pypi", pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip"}}},
}

func incidentsSpec(name string) pyenvtest.Spec {
	for _, s := range incidentSpecs {
		if s.name == name {
			return s.spec
		}
	}
	panic("no incident " + name)
}

func writeSpec(path string, s pyenvtest.Spec) error { return pyenvtest.Write(path, s) }

// incidents builds one environment per incident of DESIGN.md under root.
func incidents(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	for _, s := range incidentSpecs {
		p := filepath.Join(root, s.name)
		if err := writeSpec(p, s.spec); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), errb.String(), code
}

// noUVOnPath leaves PATH without uv (nor anything else).
func noUVOnPath(t *testing.T) { t.Setenv("PATH", t.TempDir()) }

func simFile(t *testing.T, scenario string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(p, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckGolden(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := monitortest.UVOnPath(t) // uv's command, whatever this machine has
	root := t.TempDir()
	paths := incidents(t, root)
	sim := simFile(t, simA100)

	for _, tc := range []struct {
		name   string
		args   []string
		golden string
		code   int
	}{
		{"json", append([]string{"--gpu-sim", sim, "check", "--json"}, paths...), "check.json.golden", 1},
		{"text", append([]string{"--gpu-sim", sim, "check"}, paths...), "check.txt.golden", 1},
		{"healthy only", []string{"--gpu-sim", sim, "check", "--json", paths[0]}, "check-healthy.json.golden", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			got := strings.ReplaceAll(out, root, "$ROOT")
			got = strings.ReplaceAll(got, sim, "$SIM")
			got = strings.ReplaceAll(got, filepath.Join(bin, "uv"), "uv")
			golden(t, tc.golden, got)
		})
	}
}

func TestCheckJSONContract(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := monitortest.UVOnPath(t)
	paths := incidents(t, t.TempDir())
	out, _, code := runCLI(t, append([]string{"--gpu-sim", simFile(t, simA100), "check", "--json"}, paths...)...)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	// DESIGN.md's minimum fields, read as a script would.
	var r struct {
		GPU struct {
			Simulated  bool   `json:"simulated"`
			Driver     string `json:"driver"`
			CUDADriver string `json:"cuda_driver"`
			Devices    []struct {
				Index             int    `json:"index"`
				Name              string `json:"name"`
				ComputeCapability string `json:"compute_capability"`
				MemoryTotalBytes  uint64 `json:"memory_total_bytes"`
			} `json:"devices"`
			Error *string `json:"error"`
		} `json:"gpu"`
		Envs []struct {
			Path      string `json:"path"`
			Python    string `json:"python"`
			Layout    string `json:"layout"`
			Installer string `json:"installer"`
			Packages  map[string]struct {
				Version string `json:"version"`
				Build   string `json:"build"`
				CUDA    string `json:"cuda"`
			} `json:"packages"`
			Findings []struct {
				Code, Severity, Message, Fix string
			} `json:"findings"`
		} `json:"envs"`
		Findings []any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !r.GPU.Simulated || r.GPU.Driver != "550.54.15" || r.GPU.CUDADriver != "12.4" || len(r.GPU.Devices) != 1 || r.GPU.Error == nil {
		t.Errorf("gpu = %+v", r.GPU)
	}
	if r.Findings == nil {
		t.Error(`"findings" must be a list, not null`)
	}
	byName := map[string]int{}
	for i, e := range r.Envs {
		byName[filepath.Base(e.Path)] = i
	}
	good := r.Envs[byName["good-cu121"]]
	if good.Installer != "uv" || good.Layout != "posix" || good.Python == "" || good.Packages["torch"].Build != "cuda" || good.Packages["torch"].CUDA != "12.1" || len(good.Findings) != 0 {
		t.Errorf("good env = %+v", good)
	}
	cpu := r.Envs[byName["uv-cpu-overwrite"]]
	if len(cpu.Findings) == 0 || cpu.Findings[0].Code != "TORCH_CPU_BUILD" || cpu.Findings[0].Severity != "error" ||
		!strings.HasPrefix(cpu.Findings[0].Fix, filepath.Join(bin, "uv")+" pip install") {
		t.Errorf("cpu env findings = %+v", cpu.Findings)
	}
	win := r.Envs[byName["windows-pypi"]]
	if win.Layout != "windows" || win.Packages["torch"].Build != "cpu" {
		t.Errorf("windows env = %+v", win)
	}
}

func TestExitStatus(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	sim := simFile(t, simA100)
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"bad flag", []string{"check", "--nope"}, 2, "flag provided but not defined"},
		{"missing path", []string{"--gpu-sim", sim, "check", "/does/not/exist"}, 1, ""},
		{"not an environment", []string{"--gpu-sim", sim, "check", t.TempDir()}, 1, ""},
		{"bad log level", []string{"--log-level", "loud", "check"}, 2, "--log-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.err)
			}
		})
	}
}

func TestNoDriverIsAStateNotACrash(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	paths := incidents(t, t.TempDir())
	out, _, code := runCLI(t, "--gpu-sim", simFile(t, `{"devices": []}`), "check", paths[1])
	if code != 0 {
		t.Errorf("a CPU torch without a GPU is not an error; exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "no NVIDIA driver") || !strings.Contains(out, "[simulated]") || !strings.Contains(out, "NO_GPU_DRIVER") {
		t.Errorf("output:\n%s", out)
	}
}

func TestMalformedConfigIsAnError(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("refresh = [oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := incidents(t, t.TempDir())
	out, stderr, code := runCLI(t, "--config", cfg, "--gpu-sim", simFile(t, simA100), "check", paths[0])
	if code != exitUsage || out != "" || !strings.Contains(stderr, cfg) || !strings.Contains(stderr, "toml") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n--- got\n%s", path, got)
	}
}

func TestReportCommand(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	paths := incidents(t, t.TempDir())
	dir := filepath.Join(t.TempDir(), "evidence")
	out, stderr, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "report", "-o", dir, paths[0], paths[1])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, dir) {
		t.Errorf("output %q does not name the folder", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "check.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Envs []struct{ Path string } `json:"envs"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Envs) != 2 {
		t.Errorf("check.json: %v %+v", err, r)
	}
	// A second run into the same folder is refused, not merged.
	if _, stderr, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "report", "-o", dir, paths[0]); code != 2 || !strings.Contains(stderr, "already holds files") {
		t.Errorf("second run: exit %d, %s", code, stderr)
	}
}
