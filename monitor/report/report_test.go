package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func bundle() Bundle {
	mem := uint64(2 << 30)
	env := &pyenv.Env{Path: "/home/u/llm/.venv", Python: "3.11", Layout: pyenv.LayoutPOSIX, Installer: "uv",
		Packages: map[string]*pyenv.Package{"torch": {Version: "2.10.0", Build: pyenv.BuildCPU, Installer: "uv"}}}
	return Bundle{
		Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Version: "test",
		Host: Host{OS: "linux", Arch: "amd64", Kernel: "6.1.0", Hostname: "box"},
		Check: monitor.CheckResult{
			GPU: gpu.State{Simulated: true, Source: "sim:/tmp/a100.json", Driver: "550.54.15", CUDADriver: "12.4",
				Devices: []gpu.Device{{Name: "NVIDIA A100", ComputeCapability: "8.0", Architecture: "Ampere", MemoryTotalBytes: 40 << 30}}},
			Envs: []monitor.EnvReport{{Env: env, Verdict: "error", Findings: []finding.Finding{{Code: "TORCH_CPU_BUILD", Severity: "error",
				Message: "torch 2.10.0 is a CPU-only build", Fix: "uv pip install ..."}}}},
			Findings: []finding.Finding{},
		},
		Processes: []monitor.Process{{Row: procs.Row{Proc: procs.Proc{PID: 4242, Cmdline: procs.Redact([]string{"python", "train.py", "--hf-token", "hf_SECRET"})},
			GPUMemoryBytes: &mem, Verdict: procs.VerdictGPU}}},
		Summary: "1 GPU (simulated) · 1 env · 1 env broken",
	}
}

func TestWrite(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "report")
	if err := Write(dir, bundle()); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := slices.Clone(Files)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("files = %v, want %v", names, want)
	}
	if top, _ := os.ReadDir(parent); len(top) != 1 {
		t.Errorf("something was written outside the report folder: %v", top)
	}
	var all strings.Builder
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		all.Write(b)
		if strings.HasSuffix(n, ".json") && !json.Valid(b) {
			t.Errorf("%s is not JSON", n)
		}
	}
	text := all.String()
	for _, must := range []string{"550.54.15", "12.4", "NVIDIA A100", "/home/u/llm/.venv", "TORCH_CPU_BUILD", "simulated", "2026-11-22T10:00:00Z", "4242"} {
		if !strings.Contains(text, must) {
			t.Errorf("the report does not say %q", must)
		}
	}
	if readme, _ := os.ReadFile(filepath.Join(dir, "README.md")); !strings.Contains(string(readme), "Summary: 1 GPU (simulated) · 1 env · 1 env broken.") {
		t.Errorf("README.md does not carry the summary it was given:\n%s", readme)
	}
	if strings.Contains(text, "hf_SECRET") {
		t.Error("a secret reached the report")
	}
}

func TestRefusesAFolderWithFiles(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o644)
	err := Write(dir, bundle())
	if err == nil || !strings.Contains(err.Error(), "already holds files") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Error("the user's file changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("wrote into a folder that held files")
	}
}

// TestMarkdownShowsEscapesInsteadOfObeyingThem: a hostile environment
// path, process command and host name reach the Markdown files as visible
// escapes, never as terminal controls; the JSON files keep the real text
// (JSON escapes control characters itself).
func TestMarkdownShowsEscapesInsteadOfObeyingThem(t *testing.T) {
	b := bundle()
	hostile := "/home/u/evil\x1b]0;owned\x07\u202e/.venv"
	b.Check.Envs[0].Env.Path = hostile
	b.Check.Envs[0].Findings[0].Message = "torch in " + hostile + " is a CPU build"
	b.Processes[0].EnvPath = hostile
	b.Processes[0].Cmdline = []string{"\x1b[2Jpython", "train.py"}
	b.Host.Hostname = "box\x1b[31m"
	dir := filepath.Join(t.TempDir(), "report")
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.md", "env_info.md"} {
		md, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.IndexFunc(string(md), func(r rune) bool { return (r < 0x20 && r != '\n') || r == '\u202e' }); i >= 0 {
			t.Errorf("%s holds a control character at %d:\n%q", name, i, md)
		}
	}
	info, _ := os.ReadFile(filepath.Join(dir, "env_info.md"))
	for _, want := range []string{`### /home/u/evil\x1b]0;owned\x07\u202e/.venv`, "`\\x1b[2Jpython train.py`"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("env_info.md lacks %q:\n%s", want, info)
		}
	}
	var check struct {
		Envs []struct{ Path string }
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "check.json"))
	if err := json.Unmarshal(raw, &check); err != nil || check.Envs[0].Path != hostile {
		t.Errorf("check.json does not keep the real path: %v %q", err, check.Envs)
	}
}

// TestReportKernels: env_info.md lists each CUDA library with what its
// fat binary carries, or why it could not be read.
func TestReportKernels(t *testing.T) {
	b := bundle()
	b.Check.Envs[0].CUDALibs = []pyenv.CUDALib{
		{Package: "llama-cpp-python", File: "/home/u/llm/.venv/lib/python3.11/site-packages/llama_cpp/lib/libggml-cuda.so",
			Kernels: "sm_86 sm_89 sm_120 sm_121 · PTX 75 80 90", Runtime: "libcudart.so.13"},
		{Package: "my-ext", File: "/x/a|b.so", Error: "malformed CUDA fat binary (section .nv_fatbin): truncated"},
	}
	info := envInfo(b)
	for _, want := range []string{
		"| /home/u/llm/.venv/lib/python3.11/site-packages/llama_cpp/lib/libggml-cuda.so | llama-cpp-python | sm_86 sm_89 sm_120 sm_121 · PTX 75 80 90 | libcudart.so.13 |",
		`| /x/a\|b.so | my-ext | could not be read: malformed CUDA fat binary`,
	} {
		if !strings.Contains(info, want) {
			t.Errorf("env_info.md lacks %q:\n%s", want, info)
		}
	}
}

// TestHistoryIsJSONOnly: the history's events are in history.json, newest
// first as given, and a message read back from the history file (which
// holds a terminal escape here) reaches no Markdown file: JSON escapes it.
func TestHistoryIsJSONOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	b := bundle()
	b.History = History{Damaged: 2, Events: []monitor.Event{
		{Time: b.Time, Kind: monitor.KindCUDAWheelReplaced, Env: "/home/u/llm/.venv", Message: "replaced \x1b]0;pwned\x07 by pip"},
		{Time: b.Time.Add(-time.Hour), Kind: monitor.KindEnvAdded, Env: "/home/u/llm/.venv", Message: "Watching"},
	}}
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got History
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 2 || got.Events[0].Kind != monitor.KindCUDAWheelReplaced || got.Damaged != 2 {
		t.Errorf("history.json = %+v", got)
	}
	if strings.ContainsRune(string(data), 0x1b) {
		t.Error("history.json holds a raw escape character")
	}
	for _, n := range []string{"README.md", "env_info.md"} {
		md, _ := os.ReadFile(filepath.Join(dir, n))
		if strings.Contains(string(md), "pwned") {
			t.Errorf("%s holds an event's text read back from the history", n)
		}
	}
	if readme, _ := os.ReadFile(filepath.Join(dir, "README.md")); !strings.Contains(string(readme), "the newest 2 events") || !strings.Contains(string(readme), "2 damaged lines") {
		t.Errorf("README.md does not describe history.json:\n%s", readme)
	}
}

// TestPackagesTorchFirst: an environment's table starts with torch, not
// with the nvidia-* libraries that sort before it by name.
func TestPackagesTorchFirst(t *testing.T) {
	names := []string{"nvidia-cublas-cu12", "triton", "torchvision", "llama-cpp-python", "torch", "nvidia-cudnn-cu12"}
	sortPackages(names)
	want := []string{"torch", "torchvision", "llama-cpp-python", "nvidia-cublas-cu12", "nvidia-cudnn-cu12", "triton"}
	if !slices.Equal(names, want) {
		t.Errorf("%v, want %v", names, want)
	}
}
