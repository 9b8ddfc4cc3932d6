package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
)

// lockOf is a uv.lock whose one torch entry is version from source (a
// TOML inline table).
func lockOf(version, source string) string {
	return "version = 1\nrequires-python = \">=3.11\"\n\n[[package]]\nname = \"torch\"\nversion = \"" + version + "\"\nsource = " + source +
		"\n\n[[package]]\nname = \"train\"\nversion = \"0.1.0\"\nsource = { virtual = \".\" }\ndependencies = [\n    { name = \"torch\" },\n]\n"
}

const (
	pypi    = `{ registry = "https://pypi.org/simple" }`
	trainPy = "[project]\nname = \"train\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\ndependencies = [\"torch>=2.5\"]\n"
	pinned  = trainPy + "\n[[tool.uv.index]]\nname = \"pytorch-cu126\"\nurl = \"https://download.pytorch.org/whl/cu126\"\nexplicit = true\n\n[tool.uv.sources]\ntorch = { index = \"pytorch-cu126\" }\n"
	cu126Ix = `{ registry = "https://download.pytorch.org/whl/cu126" }`
	cu128Ix = `{ registry = "https://download.pytorch.org/whl/cu128" }`
	gtx1080 = "NVIDIA GeForce GTX 1080"
)

// TestCheckUVProject: UV_WILL_REPLACE_TORCH judges the build uv.lock
// installs as the rules judge an installed one. Audit issue 1 (incidents
// 1 and 4 together): on an RTX 5090 with torch 2.7.1+cu128, a lock that
// takes torch 2.7.1 from PyPI (cu126 on Linux, no sm_120) or from the
// cu126 index is an error with the index pin as its fix; so is PyPI's
// cu128 torch 2.8 over a cu126 one on a GTX 1080 (sm_61), and a lock whose
// CUDA the driver does not support. A build that runs with faults the
// installed one does not have is a warning; one no worse than what is
// installed, or judged on no driver, raises nothing.
func TestCheckUVProject(t *testing.T) {
	tests := []struct {
		name      string
		gpu       gpu.State
		installed string // dist version; its CUDA from its tag
		layout    pyenv.Layout
		pyproject string
		lock      string
		severity  finding.Severity // "" for no finding
		message   string
		fix       bool
	}{
		{name: "PyPI's cu126 torch 2.7 over cu128 on an RTX 5090", gpu: rtx5090, installed: "2.7.1+cu128", lock: lockOf("2.7.1", pypi),
			severity: finding.SeverityError, fix: true,
			message: "uv.lock takes torch 2.7.1 from PyPI for Linux, which is a CUDA 12.6 build (cu126: PyPI's Linux wheels of torch 2.7 are) that cannot run here: cu126 has no code for NVIDIA GeForce RTX 5090 (sm_120)"},
		{name: "the cu126 index's 2.7.1+cu126 on an RTX 5090", gpu: rtx5090, installed: "2.7.1+cu128", lock: lockOf("2.7.1+cu126", cu126Ix),
			severity: finding.SeverityError, fix: true,
			message: "uv.lock takes torch 2.7.1+cu126 from https://download.pytorch.org/whl/cu126 for Linux, which is a CUDA 12.6 build (cu126) that cannot run here"},
		{name: "the project's own cu126 pin on an RTX 5090", gpu: rtx5090, installed: "2.7.1+cu128", pyproject: pinned, lock: lockOf("2.7.1+cu126", cu126Ix),
			severity: finding.SeverityError, message: `pyproject.toml itself sends torch to index "pytorch-cu126"`},
		{name: "pinned to cu128, the lock has not followed", gpu: rtx5090, installed: "2.7.1+cu128", pyproject: strings.ReplaceAll(pinned, "cu126", "cu128"),
			lock: lockOf("2.7.1", pypi), severity: finding.SeverityError, message: `pyproject.toml already sends torch to index "pytorch-cu128" but uv.lock has not followed: run ` + "`uv lock`" + ` in `},
		{name: "the cu128 index on an RTX 5090", gpu: rtx5090, installed: "2.7.1+cu128", lock: lockOf("2.7.1+cu128", cu128Ix)},
		{name: "PyPI's cu128 torch 2.8 over cu126 on a GTX 1080", installed: "2.8.0+cu126", lock: lockOf("2.8.0", pypi),
			gpu:      gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device(gtx1080, "6.1")}},
			severity: finding.SeverityError, fix: true, message: "cu128 has no code for NVIDIA GeForce GTX 1080 (sm_61)"},
		{name: "PyPI's cu124 torch 2.5 on a CUDA 11.4 driver", gpu: a100Driver470, installed: "2.5.1+cu118", lock: lockOf("2.5.1", pypi),
			severity: finding.SeverityError, fix: true, message: "cu124 needs a newer driver"},
		{name: "PyPI's cu126 torch 2.7 runs on a CUDA 12.4 driver only through minor-version compatibility", gpu: a100Driver550, installed: "2.7.1+cu118",
			lock: lockOf("2.7.1", pypi), severity: finding.SeverityWarning, fix: true, message: "runs here only with faults the installed one does not have: cu126 runs on this driver only through minor-version compatibility"},
		{name: "a fault the installed torch has too is no worse", gpu: a100Driver550, installed: "2.9.1+cu126", lock: lockOf("2.9.1", pypi)},
		{name: "PyPI's CUDA of torch 2.11 is not verified", gpu: rtx5090, installed: "2.11.0+cu128", lock: lockOf("2.11.0", pypi),
			severity: finding.SeverityWarning, fix: true, message: "most likely a CUDA 13.0 build (cu130: PyPI's Linux wheels of torch 2.11 are thought to be, not verified) that cannot run here"},
		{name: "a torch that cannot run here already is not made worse", gpu: rtx5090, installed: "2.7.1+cu126", lock: lockOf("2.7.1", pypi)},
		{name: "no driver: PyPI's Linux torch is a CUDA build", gpu: noDriver, installed: "2.7.1+cu128", lock: lockOf("2.7.1", pypi)},
		{name: "Windows' PyPI torch is CPU-only", gpu: rtx5090, installed: "2.7.1+cu128", layout: pyenv.LayoutWindows, lock: lockOf("2.7.1", pypi),
			severity: finding.SeverityWarning, fix: true, message: "which is a CPU-only build"},
		{name: "Windows: the cu126 index on an RTX 5090", gpu: rtx5090, installed: "2.7.1+cu128", layout: pyenv.LayoutWindows, lock: lockOf("2.7.1+cu126", cu126Ix),
			severity: finding.SeverityError, fix: true, message: "for Windows, which is a CUDA 12.6 build (cu126) that cannot run here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			py := tt.pyproject
			if py == "" {
				py = trainPy
			}
			p := uvproject.Project{Dir: dir, Pyproject: filepath.Join(dir, "pyproject.toml"), Lock: filepath.Join(dir, "uv.lock")}
			for path, data := range map[string]string{p.Pyproject: py, p.Lock: tt.lock} {
				if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			root := filepath.Join(dir, ".venv")
			_, local, _ := strings.Cut(tt.installed, "+")
			cuda := local[2:len(local)-1] + "." + local[len(local)-1:]
			if err := pyenvtest.Write(root, pyenvtest.Spec{Manager: "uv", Layout: tt.layout, Torch: &pyenvtest.Torch{DistVersion: tt.installed, CUDA: cuda, Installer: "uv"}}); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			info, err := uvproject.ReadProject(p)
			if err != nil {
				t.Fatal(err)
			}
			got := CheckUVProject(env, info, tt.gpu)
			if tt.severity == "" {
				if len(got) != 0 {
					t.Errorf("findings:\n%s", dump(got))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %d findings, want 1:\n%s", len(got), dump(got))
			}
			f := got[0]
			if f.Code != finding.CodeUVWillReplaceTorch || f.Severity != tt.severity || !strings.Contains(f.Message, tt.message) ||
				!strings.HasPrefix(f.Message, "torch "+tt.installed+" is a CUDA build, but ") || f.Env != env.Path {
				t.Errorf("finding %s/%s %q, want %s with %q", f.Code, f.Severity, f.Message, tt.severity, tt.message)
			}
			if wantFix := "gpucanary fix --pin-index " + env.Path; tt.fix && f.Fix != wantFix || !tt.fix && f.Fix != "" {
				t.Errorf("fix %q (want one: %v)", f.Fix, tt.fix)
			}
		})
	}
}
