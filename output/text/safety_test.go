package text

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// colourCode is the only escape this package may write itself.
var colourCode = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// assertInert fails when out holds a control character other than a
// newline and this package's own colour codes.
func assertInert(t *testing.T, out string) {
	t.Helper()
	rest := colourCode.ReplaceAllString(out, "")
	for i, r := range rest {
		if (r < 0x20 && r != '\n') || r == 0x7f || unsafeForTest(r) {
			t.Errorf("output holds %U at %d:\n%q", r, i, out)
			return
		}
	}
}

func unsafeForTest(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || r == '\u202e' || r == '\u2066'
}

// TestHostileTextIsShownNotObeyed: another user's process named with
// terminal escapes, an environment path holding ESC and a right-to-left
// override, and package metadata with a C1 control are shown as escapes
// in every printer, with colour on and off.
func TestHostileTextIsShownNotObeyed(t *testing.T) {
	hostileEnv := "/home/ana/evil\x1b[2J\u202e/.venv"
	env := &pyenv.Env{Path: hostileEnv, Installer: "pip\n", Python: "3.11", Packages: map[string]*pyenv.Package{
		pyenv.Torch: {Version: "2.5.1\u009b2J", Build: pyenv.BuildCPU}}}
	hostile := finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError,
		Message: "torch in " + hostileEnv + " is a CPU build.", Fix: "pip install --python '" + hostileEnv + "' torch"}
	res := monitor.CheckResult{GPU: gpu.State{Driver: "550\x1b]0;x\x07", Devices: []gpu.Device{{Name: "A100\x1b[31m", Error: "bad\x1b[2K"}}},
		Envs: []monitor.EnvReport{{Env: env, Via: "home", Verdict: monitor.VerdictError, Findings: []finding.Finding{hostile}}}}
	mem := uint64(1 << 30)
	row := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 7, User: "mallory\x1b]0;", EnvPath: hostileEnv,
		Cmdline: []string{"\x1b]0;owned\x07python", "\x1b[2J", "train.py"}}, GPUs: []int{0}, GPUMemoryBytes: &mem,
		Verdict: procs.VerdictCPU, Reason: "no CUDA\x1b[1A"}, Findings: []finding.Finding{hostile}}
	event := monitor.Event{Time: time.Now(), Kind: monitor.KindFindingRaised, Env: hostileEnv, Finding: &hostile,
		Message: hostile.Message, Fix: hostile.Fix}

	for _, colour := range []bool{false, true} {
		for name, print := range map[string]func(Printer){
			"check":    func(p Printer) { p.Check(res) },
			"ps":       func(p Printer) { p.Processes(res.GPU, []monitor.Process{row}) },
			"ps 80":    func(p Printer) { p.Width = 80; p.Processes(res.GPU, []monitor.Process{row}) },
			"watch":    func(p Printer) { p.Event(event) },
			"watching": func(p Printer) { p.Watching(monitor.State{GPU: res.GPU, Envs: res.Envs}) },
		} {
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				print(Printer{W: &b, Colour: colour})
				out := b.String()
				assertInert(t, out)
				if !strings.Contains(out, `\x1b`) {
					t.Errorf("the escapes are not shown:\n%s", out)
				}
			})
		}
	}
	var b bytes.Buffer
	Printer{W: &b}.Processes(res.GPU, []monitor.Process{row})
	for _, want := range []string{`\x1b]0;owned\x07python \x1b[2J train.py`, ` mallory\… `} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("ps lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Printer{W: &b}.Check(res)
	for _, want := range []string{`/home/ana/evil\x1b[2J\u202e/.venv  (pip\n, Python 3.11)`, `2.5.1\u009b2J`, `driver 550\x1b]0;x\x07`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("check lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTableFitsTheTerminal: on a terminal of any usual width no line of
// ps wraps, the command is cut before any other column, and the GPU's
// numbers stay on their line.
func TestTableFitsTheTerminal(t *testing.T) {
	mem := uint64(3 << 30)
	util, temp, watts, limit := uint32(87), uint32(65), 251.4, 400.0
	st := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB",
		ComputeCapability: "8.0", MemoryTotalBytes: 40 << 30, MemoryUsedBytes: 10 << 30,
		UtilizationGPU: &util, TemperatureC: &temp, PowerWatts: &watts, PowerLimitWatts: &limit}}}
	long := monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: 123456, User: "a-very-long-user-name",
		EnvPath: "/srv/projects/large-language-models/finetune/.venv", StartTime: time.Now().Add(-time.Hour), RSSBytes: 5 << 30,
		Cmdline: []string{"python", "-m", "torch.distributed.run", "--nproc_per_node=8", "train.py", "--config", "configs/llama-70b.yaml"}},
		GPUs: []int{0}, GPUMemoryBytes: &mem, Verdict: procs.VerdictGPU}, Findings: []finding.Finding{{
		Code: finding.CodeJobOnCPU, Severity: finding.SeverityWarning, Message: strings.Repeat("a long message ", 12)}}}
	wide := long
	wide.EnvPath = "/home/ana/模型训练/大型语言模型/.venv"
	wide.Cmdline = []string{"python", "训练脚本.py", "--数据集", "中文维基百科"}
	for _, width := range []int{40, 60, 80, 100, 132, 200} {
		for _, colour := range []bool{false, true} {
			var b bytes.Buffer
			Printer{W: &b, Width: width, Colour: colour}.Processes(st, []monitor.Process{long, wide})
			for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if n := columns(line); n > width {
					t.Errorf("width %d: a line takes %d columns: %q", width, n, line)
				}
			}
			if width >= 60 && !strings.Contains(b.String(), "util 87%  temp 65°C  power 251 / 400 W  mem [") {
				t.Errorf("width %d: no GPU numbers:\n%s", width, b.String())
			}
		}
	}
	var b bytes.Buffer
	Printer{W: &b, Width: 80}.Processes(st, []monitor.Process{long})
	lines := strings.Split(b.String(), "\n")
	head, first := lines[4], lines[5]
	for _, col := range []string{"GPU", "PID", "USER", "ENVIRONMENT", "GPU-MEM", "CPU%", "VERDICT", "COMMAND"} {
		if !strings.Contains(head, col) {
			t.Errorf("80 columns: the header lost %s: %q", col, head)
		}
	}
	for _, col := range []string{"RSS", "TIME"} {
		if strings.Contains(head, col) {
			t.Errorf("80 columns: %s is kept before the command: %q", col, head)
		}
	}
	if !strings.HasSuffix(first, " python -m torch.d…") || !strings.Contains(first, "3.0 GiB") {
		t.Errorf("80 columns: row %q", first)
	}
	// Without a width nothing is dropped.
	b.Reset()
	Printer{W: &b}.Processes(st, []monitor.Process{long})
	if !strings.Contains(b.String(), "RSS") || !strings.Contains(b.String(), "TIME") {
		t.Errorf("no width: columns dropped:\n%s", b.String())
	}
}

func TestDeviceNumbersUnknownAreDashes(t *testing.T) {
	var b bytes.Buffer
	Printer{W: &b}.Processes(gpu.State{Driver: "550", Devices: []gpu.Device{{Name: "T4", Asleep: true}}}, nil)
	if !strings.Contains(b.String(), "     util -  temp -  power -  mem -\n") {
		t.Errorf("unknowns:\n%s", b.String())
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"a longer line", 8, "a longe…"},
		{"\x1b[31mred text\x1b[0m", 5, "\x1b[31mred …\x1b[0m"},
		{"\x1b[31mred\x1b[0m and more", 6, "\x1b[31mred\x1b[0m a…"},
		{"模型训练", 5, "模型…"},
		{"e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301e\u0301"},
	} {
		if got := fit(tc.in, tc.w); got != tc.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
}

func TestTableLayout(t *testing.T) {
	for _, tc := range []struct {
		width       int
		heads       string
		commandSize int
	}{
		{0, "GPU PID USER ENVIRONMENT GPU-MEM SM% CPU% RSS TIME VERDICT", 0}, // no width: the command whole
		{200, "GPU PID USER ENVIRONMENT GPU-MEM SM% CPU% RSS TIME VERDICT", 103},
		{80, "GPU PID USER ENVIRONMENT GPU-MEM SM% CPU% VERDICT", 18},
		{60, "GPU PID GPU-MEM CPU% VERDICT", 21},
		{30, "GPU PID GPU-MEM CPU% VERDICT", 1},
	} {
		cols, cmd := tableLayout(tc.width)
		var heads []string
		for _, c := range cols {
			heads = append(heads, c.head)
		}
		if got := strings.Join(heads, " "); got != tc.heads || cmd != tc.commandSize {
			t.Errorf("width %d: %s + command %d, want %s + %d", tc.width, got, cmd, tc.heads, tc.commandSize)
		}
	}
}

func TestWatching(t *testing.T) {
	good := &pyenv.Env{Path: "/home/ana/llm/.venv", Installer: "uv", Python: "3.11", Packages: map[string]*pyenv.Package{pyenv.Torch: {Version: "2.5.1+cu121"}}}
	bare := &pyenv.Env{Path: "/opt/tools", Packages: map[string]*pyenv.Package{}}
	interp := &pyenv.Env{Path: "/home/ana/.pyenv/versions/2.7.18", Installer: pyenv.InstallerUnknown, Python: "2.7", Packages: map[string]*pyenv.Package{}}
	st := monitor.State{GPU: a100, DiscoveryComplete: true, Envs: []monitor.EnvReport{
		{Env: good, Via: "argument", Verdict: monitor.VerdictOK},
		{Env: bare, Via: "VIRTUAL_ENV", Verdict: monitor.VerdictNoTorch},
		{Env: interp, Via: "pyenv", Verdict: monitor.VerdictNoTorch},
	}}
	var b bytes.Buffer
	Printer{W: &b, Home: "/home/ana"}.Watching(st)
	want := "GPU   driver 550.54.15 · CUDA 12.4 [simulated]\n" +
		"  0  NVIDIA A100-SXM4-40GB (Ampere, sm_80) · 40.0 GiB\n" +
		"Watching 3 environments:\n" +
		"  ~/llm/.venv  (uv, Python 3.11, named on the command line)  torch 2.5.1+cu121  OK\n" +
		"  /opt/tools  (unknown, from $VIRTUAL_ENV)  no torch  NO TORCH\n" +
		// the manager as check names it, not "one of pyenv's environments"
		"  ~/.pyenv/versions/2.7.18  (pyenv, Python 2.7)  no torch  NO TORCH\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	Printer{W: &b}.Watching(monitor.State{GPU: gpu.State{}, DiscoveryComplete: true})
	if b.String() != "GPU   no NVIDIA driver\nWatching no environment yet: none was found. Pass a path: gpucanary watch PATH\n" {
		t.Errorf("none:\n%s", b.String())
	}
	// A search cut short is said as check says it, with why.
	b.Reset()
	st.DiscoveryComplete, st.SearchStopped = false, "the search of /home/ana stopped at its time budget of 2s"
	Printer{W: &b, Home: "/home/ana"}.Watching(st)
	if want := "  Search incomplete: the search of /home/ana stopped at its time budget of 2s. Environments it did not reach are not watched: pass a path (gpucanary watch PATH) or add the folder as a root in the settings.\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("cut short:\n%s", b.String())
	}
}

// TestFixCommandsAreShownAsWritten: shell writes every character that
// human.Visible escapes (and only those) with escapes of its own, in both
// dialects, so a fix command passes through this package's printers
// unchanged: what is shown is what pastes. shell cannot import human;
// this holds their two sets to one.
func TestFixCommandsAreShownAsWritten(t *testing.T) {
	words := []string{"\xe9", "\xff", "\xed\xa0\x80"}
	for r := rune(0); r < 0x3000; r++ {
		words = append(words, string(r))
	}
	for _, w := range words {
		s := "/a" + w + "b"
		escaped := human.Visible(s) != s
		for name, d := range map[string]shell.Dialect{"POSIX": shell.POSIX, "PowerShell": shell.PowerShell} {
			q := d.Join([]string{"python", s})
			if human.Visible(q) != q {
				t.Errorf("%s writes %q as %q, which the printers would change to %q", name, s, q, human.Visible(q))
			}
			if name == "POSIX" && escaped != strings.Contains(q, "$'") {
				t.Errorf("human.Visible escapes %q: %v; POSIX writes %s", s, escaped, q)
			}
		}
	}
	// Through a printer: the fix line is the command, byte for byte.
	fix := shell.POSIX.Join([]string{"/home/ana/evil\x1b[2J\u202e/.venv/bin/python", "-m", "pip", "install", "torch"})
	var b bytes.Buffer
	Printer{W: &b}.Event(monitor.Event{Time: time.Now(), Kind: monitor.KindFindingRaised, Message: "m", Fix: fix})
	if !strings.Contains(b.String(), "    fix: "+fix+"\n") {
		t.Errorf("the fix line is not the command %s:\n%s", fix, b.String())
	}
}

// tableLayout is tableLayoutOf the columns of processes on the host.
func tableLayout(width int) ([]column, int) { return tableLayoutOf(width, processColumns) }
