package text

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

var a100 = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Simulated: true, Devices: []gpu.Device{{
	Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0", Architecture: "Ampere",
	MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 10 << 30}}}

var cpuBuild = finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError,
	Message: "torch 2.5.1+cpu is a CPU-only build.", Fix: "uv pip install --reinstall torch"}

func TestCheck(t *testing.T) {
	env := &pyenv.Env{Path: "/home/ana/llm/.venv", Installer: "uv", Python: "3.11", Layout: pyenv.LayoutPOSIX,
		Packages: map[string]*pyenv.Package{pyenv.Torch: {Version: "2.5.1+cpu", Build: pyenv.BuildCPU}}}
	bare := &pyenv.Env{Path: "/opt/tools", Installer: "pip", Layout: pyenv.LayoutWindows, Packages: map[string]*pyenv.Package{}}
	// Read in path order, the bare one first: the error is printed first
	// and the environment with nothing to say is one line at the end.
	res := monitor.CheckResult{GPU: a100, Envs: []monitor.EnvReport{
		{Env: bare, Verdict: monitor.VerdictNoTorch, Findings: []finding.Finding{}},
		{Env: env, Verdict: monitor.VerdictError, Findings: []finding.Finding{cpuBuild}},
	}, Complete: true}
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ana"}.Check(res)
	want := "GPU   driver 550.54.15 · CUDA 12.4 [simulated]\n" +
		"  0  NVIDIA A100-SXM4-40GB (Ampere, sm_80) · 40.0 GiB\n" +
		"\n" +
		"~/llm/.venv  (uv, Python 3.11)  ERROR\n" +
		"  torch             2.5.1+cpu              " + pyenv.Describe(pyenv.Torch, env.Packages[pyenv.Torch]) + "\n" +
		"  ✗ TORCH_CPU_BUILD  torch 2.5.1+cpu is a CPU-only build.\n" +
		"      fix: uv pip install --reinstall torch\n" +
		"\n" +
		"1 environment without torch (pip): /opt/tools\n" +
		"\n" +
		"2 environments checked: 1 with errors, 0 with warnings.\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	// A CUDA version the driver did not give is shown as derived, a
	// lower bound, never as unknown when it was derived.
	b.Reset()
	derived := gpu.State{Driver: "535.104.05", CUDADriverDerived: "12.2", Devices: []gpu.Device{}}
	Printer{W: &b}.Check(monitor.CheckResult{GPU: derived, Complete: true})
	if got := b.String(); !strings.HasPrefix(got, "GPU   driver 535.104.05 · CUDA ≥ 12.2 (derived from the driver version)\n") {
		t.Errorf("derived CUDA version:\n%s", got)
	}

	// An asleep GPU the driver was not asked about has no compute
	// capability: say so, not "sm_".
	b.Reset()
	asleep := gpu.State{Driver: "570.133.07", CUDADriver: "12.8", Devices: []gpu.Device{{Name: "NVIDIA GeForce MX150", Asleep: true}}}
	Printer{W: &b}.Check(monitor.CheckResult{GPU: asleep, Complete: true})
	if got := b.String(); !strings.Contains(got, "  0  NVIDIA GeForce MX150 (compute capability not known) · ") {
		t.Errorf("asleep GPU:\n%s", got)
	}

	b.Reset()
	Printer{W: &b}.Check(monitor.CheckResult{GPU: gpu.State{}, Complete: true})
	if got := b.String(); got != "GPU   no NVIDIA driver\n\nNo Python environments found. Pass a path: gpucanary check PATH\n" {
		t.Errorf("nothing found:\n%s", got)
	}

	// A search cut short says so, never "nothing found" alone.
	b.Reset()
	Printer{W: &b}.Check(monitor.CheckResult{GPU: gpu.State{}, SearchStopped: "the search of /home/ana stopped at its time budget of 2s"})
	if got := b.String(); !strings.Contains(got, "Search incomplete: the search of /home/ana stopped at its time budget of 2s. Environments it did not reach are not listed") {
		t.Errorf("cut short:\n%s", got)
	}
}

func TestColour(t *testing.T) {
	for _, tc := range []struct {
		name   string
		colour bool
		want   string
	}{
		{"a terminal gets colour", true, "\x1b[31m✗\x1b[0m \x1b[31mTORCH_CPU_BUILD\x1b[0m  "},
		{"a pipe gets none", false, "✗ TORCH_CPU_BUILD  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			Printer{W: &b, Colour: tc.colour}.Finding(cpuBuild, "")
			if !strings.HasPrefix(b.String(), tc.want) {
				t.Errorf("got %q, want it to start %q", b.String(), tc.want)
			}
		})
	}
	// Neither a buffer nor a regular file is a terminal.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	none := func(string) string { return "" }
	if IsColourTerminal(&bytes.Buffer{}, none) || IsColourTerminal(f, none) {
		t.Error("colour for something that is not a terminal")
	}
}

func TestShort(t *testing.T) {
	p := Printer{Home: "/home/ana"}
	for in, want := range map[string]string{
		"/home/ana":           "~",
		"/home/ana/llm/.venv": "~/llm/.venv",
		"/home/anabel/x":      "/home/anabel/x",
		"/opt/venv":           "/opt/venv",
	} {
		if got := p.short(in); got != want {
			t.Errorf("short(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Printer{}).short("/home/ana/x"); got != "/home/ana/x" {
		t.Errorf("no home: %q", got)
	}
}

func TestProcesses(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mem := uint64(2 << 30)
	onGPU := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 4242, User: "ana", Cmdline: []string{"python", "train.py"},
		EnvPath: "/home/ana/llm/.venv", StartTime: now.Add(-90 * time.Minute), RSSBytes: 1 << 30, CPUPercent: 99.5},
		GPUs: []int{0}, GPUMemoryBytes: &mem, Verdict: procs.VerdictGPU}, Findings: []finding.Finding{}}
	idle := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 4343, User: "ana", Cmdline: []string{"python", "serve.py"}},
		Verdict: procs.VerdictCUDAIdle, Reason: "CUDA_VISIBLE_DEVICES is empty"}, Findings: []finding.Finding{}}
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ana", Now: func() time.Time { return now }}.Processes(a100, []monitor.Process{onGPU, idle})
	out := b.String()
	for _, want := range []string{
		"     util -  temp -  power -  mem [███████·······················] 10.0 GiB / 40.0 GiB\n",
		"GPU      PID USER      ENVIRONMENT",
		"0       4242 ana       ~/llm/.venv              2.0 GiB    -   99.5",
		"1h30m",
		"gpu       python train.py\n",
		"-       4343 ana       -                            n/a    -    0.0       0 B        - ",
		"cuda-idle python serve.py\n     CUDA_VISIBLE_DEVICES is empty\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	b.Reset()
	Printer{W: &b}.Processes(gpu.State{}, nil)
	if !strings.HasSuffix(b.String(), "\nNo GPU workloads: no process holds GPU memory or has an ML runtime loaded.\n") {
		t.Errorf("no rows:\n%s", b.String())
	}
}

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		used, total uint64
		want        string
	}{
		{0, 4, "[····]"},
		{2, 4, "[██··]"},
		{4, 4, "[████]"},
		{9, 4, "[████]"}, // a driver reporting more used than total does not overflow the bar
	} {
		if got := bar(tc.used, tc.total, 4); !strings.HasPrefix(got, tc.want) {
			t.Errorf("bar(%d, %d) = %q, want %s…", tc.used, tc.total, got, tc.want)
		}
	}
}

func TestEvent(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	stamp := at.Local().Format("2006-01-02 15:04:05")
	errFinding := cpuBuild
	for _, tc := range []struct {
		name string
		ev   monitor.Event
		want string
	}{
		{"an overwrite is red, with its fix",
			monitor.Event{Time: at, Kind: monitor.KindCUDAWheelReplaced, Message: "torch was replaced.", Fix: "uv pip install torch"},
			stamp + "  \x1b[31mCUDA_WHEEL_REPLACED\x1b[0m  torch was replaced.\n    fix: uv pip install torch\n"},
		{"an error finding raised is red",
			monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Finding: &errFinding, Message: "m"},
			stamp + "  \x1b[31mFINDING_RAISED\x1b[0m  m\n"},
		{"a clear is green",
			monitor.Event{Time: at, Kind: monitor.KindFindingCleared, Message: "m"},
			stamp + "  \x1b[32mFINDING_CLEARED\x1b[0m  m\n"},
		{"anything else notified is yellow",
			monitor.Event{Time: at, Kind: monitor.KindTorchChanged, Notify: true, Message: "m"},
			stamp + "  \x1b[33mTORCH_CHANGED\x1b[0m  m\n"},
		{"the rest is dim",
			monitor.Event{Time: at, Kind: monitor.KindEnvAdded, Message: "m"},
			stamp + "  \x1b[2mENV_ADDED\x1b[0m  m\n"},
		{"an event about an environment names it",
			monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Env: "/home/ana/llm/.venv", Finding: &errFinding, Message: "torch is a CPU build."},
			stamp + "  \x1b[31mFINDING_RAISED\x1b[0m  ~/llm/.venv  torch is a CPU build.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			Printer{W: &b, Colour: true, Home: "/home/ana"}.Event(tc.ev)
			if b.String() != tc.want {
				t.Errorf("got %q\nwant %q", b.String(), tc.want)
			}
		})
	}
}

// TestCheckBorrowedTorch: a torch read from a folder other than the
// environment's own (the user site before a conda env's site-packages)
// says where it is loaded from, on a line under it; the env's own says
// nothing more.
func TestCheckBorrowedTorch(t *testing.T) {
	user := "/home/ana/.local/lib/python3.11/site-packages"
	own := "/home/ana/miniconda3/envs/gpu/lib/python3.11/site-packages"
	env := &pyenv.Env{Path: "/home/ana/miniconda3/envs/gpu", Kind: pyenv.KindConda, Installer: "conda", Python: "3.11", Layout: pyenv.LayoutPOSIX,
		SitePackages: own, Sites: []pyenv.Site{{Path: user, From: pyenv.SiteUser}, {Path: own, From: pyenv.SiteOwn}},
		Packages: map[string]*pyenv.Package{
			pyenv.Torch:       {Version: "2.5.1+cpu", Build: pyenv.BuildCPU, Site: user},
			pyenv.TorchVision: {Version: "0.20.1", Build: pyenv.BuildCUDA, CUDA: "12.1", Site: own},
		}}
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ana"}.Check(monitor.CheckResult{GPU: a100, Complete: true,
		Envs: []monitor.EnvReport{{Env: env, Verdict: monitor.VerdictError, Findings: []finding.Finding{cpuBuild}}}})
	want := "~/miniconda3/envs/gpu  (conda, Python 3.11)  ERROR\n" +
		"  torch             2.5.1+cpu              CPU only\n" +
		"                    loaded from ~/.local/lib/python3.11/site-packages (the user site, searched before the environment's own site-packages)\n" +
		"  torchvision       0.20.1                 CUDA 12.1\n" +
		"  ✗ TORCH_CPU_BUILD"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got:\n%s\nwant it to hold:\n%s", b.String(), want)
	}
}

// TestCheckQuiet: nine pyenv interpreters without torch are one line
// after the environments with something to say, worst first, and the
// manager is named as watch names it.
func TestCheckQuiet(t *testing.T) {
	var envs []monitor.EnvReport
	for _, v := range []string{"2.7.18", "3.8.19", "3.9.19", "3.10.14", "3.11.9", "3.12.4", "3.13.0", "pypy3.10-7.3.16", "miniforge3"} {
		envs = append(envs, monitor.EnvReport{Env: &pyenv.Env{Path: "/home/ana/.pyenv/versions/" + v, Installer: pyenv.InstallerUnknown,
			Packages: map[string]*pyenv.Package{}}, Via: "pyenv", Verdict: monitor.VerdictNoTorch})
	}
	okEnv := &pyenv.Env{Path: "/home/ana/a/.venv", Installer: "pip", Python: "3.12",
		Packages: map[string]*pyenv.Package{pyenv.Torch: {Version: "2.5.1+cu124", Build: pyenv.BuildCUDA, CUDA: "12.4"}}}
	warn := finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityWarning, Message: "a warning."}
	warnEnv := &pyenv.Env{Path: "/home/ana/b/.venv", Installer: "uv", Python: "3.12",
		Packages: map[string]*pyenv.Package{pyenv.Torch: {Version: "2.5.1+cu124", Build: pyenv.BuildCUDA, CUDA: "12.4"}}}
	errEnv := &pyenv.Env{Path: "/home/ana/c/.venv", Installer: "uv", Python: "3.12",
		Packages: map[string]*pyenv.Package{pyenv.Torch: {Version: "2.5.1+cpu", Build: pyenv.BuildCPU}}}
	named := &pyenv.Env{Path: "/home/ana/named", Installer: "pip", Packages: map[string]*pyenv.Package{}}
	envs = append([]monitor.EnvReport{
		{Env: okEnv, Verdict: monitor.VerdictOK},
		{Env: warnEnv, Verdict: monitor.VerdictWarning, Findings: []finding.Finding{warn}},
		{Env: named, Via: "argument", Verdict: monitor.VerdictNoTorch},
	}, envs...)
	envs = append(envs, monitor.EnvReport{Env: errEnv, Verdict: monitor.VerdictError, Findings: []finding.Finding{cpuBuild}})
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ana"}.Check(monitor.CheckResult{GPU: a100, Envs: envs, Complete: true})
	got := b.String()
	var heads []string
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "~") || strings.Contains(line, "without torch") {
			heads = append(heads, line)
		}
	}
	want := []string{
		"~/c/.venv  (uv, Python 3.12)  ERROR",
		"~/b/.venv  (uv, Python 3.12)  WARNING",
		"~/a/.venv  (pip, Python 3.12)  OK",
		"~/named  (pip)  NO TORCH",
		"9 environments without torch (pyenv): ~/.pyenv/versions/{2.7.18, 3.8.19, 3.9.19, 3.10.14, 3.11.9, 3.12.4, 3.13.0, pypy3.10-7.3.16, miniforge3}",
	}
	if strings.Join(heads, "\n") != strings.Join(want, "\n") {
		t.Errorf("heads:\n%s\nwant:\n%s\n\nwhole:\n%s", strings.Join(heads, "\n"), strings.Join(want, "\n"), got)
	}
	if !strings.HasSuffix(got, "13 environments checked: 1 with errors, 1 with warnings.\n") {
		t.Errorf("summary:\n%s", got)
	}
}

// TestProcessesCommandWidth: piped (no width) the command is whole, as a
// script reading it needs; at a terminal's width it is cut at its end,
// after the script, and a 7-digit PID is never cut.
func TestProcessesCommandWidth(t *testing.T) {
	args := []string{"/home/ana/work/proj/.venv/bin/python", "train.py", "--epochs", "90"}
	for i := 0; i < 20; i++ {
		args = append(args, fmt.Sprintf("--option-%02d=value", i))
	}
	r := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 4194303, User: "ana", Cmdline: args, EnvPath: "/home/ana/work/proj/.venv"},
		Verdict: procs.VerdictGPU}, Findings: []finding.Finding{}}
	whole := "python train.py --epochs 90 " + strings.Join(args[4:], " ")
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ana"}.Processes(a100, []monitor.Process{r})
	if !strings.Contains(b.String(), " 4194303 ") || !strings.HasSuffix(b.String(), whole+"\n") {
		t.Errorf("piped, the command is not whole:\n%s", b.String())
	}
	b.Reset()
	row := func(width int) string {
		b.Reset()
		Printer{W: &b, Home: "/home/ana", Width: width}.Processes(a100, []monitor.Process{r})
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.Contains(l, "4194303") {
				return l
			}
		}
		return ""
	}
	if l := row(140); columns(l) != 140 || !strings.Contains(l, " python train.py --epochs 90 --option-00") || !strings.HasSuffix(l, "…") {
		t.Errorf("at 140 columns (%d): %q", columns(l), l)
	}
	// Narrow, the environment keeps its end.
	if l := row(100); !strings.Contains(l, " 4194303 ") || !strings.Contains(l, " …roj/.venv ") {
		t.Errorf("at 100 columns: %q", l)
	}
}
