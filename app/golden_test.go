package app

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// goldenNow is the golden windows' clock.
var goldenNow = time.Date(2026, 3, 14, 15, 9, 0, 0, time.Local)

// goldenState is a fixed state, so the windows render the same every run.
func goldenState() monitor.State {
	s := presenttest.State()
	for i := range s.Processes {
		s.Processes[i].StartTime = goldenStart // one process across states
	}
	s.Processes[1].BusyFor = 3*time.Minute + 25*time.Second
	s.Envs = append(s.Envs, comfyEnv())
	// The A100 at its power cap under load, its link at its best, and a
	// job that ran on it (started, stalled, ended) and one running.
	d := &s.GPU.Devices[0]
	d.ClocksEventReasons = []string{gpu.ReasonSWPowerCap}
	d.PCIe = &gpu.PCIe{Gen: 4, Width: 16, MaxGen: 4, MaxWidth: 16}
	s.JobMarks = []monitor.JobMark{
		{Time: goldenNow.Add(-9 * time.Minute), Kind: monitor.MarkStarted, PID: 4100, Label: "finetune.py"},
		{Time: goldenNow.Add(-7 * time.Minute), Kind: monitor.MarkStalled, PID: 4100, Label: "finetune.py"},
		{Time: goldenNow.Add(-5 * time.Minute), Kind: monitor.MarkEnded, PID: 4100, Label: "finetune.py", Detail: "crashed"},
		{Time: goldenNow.Add(-3 * time.Minute), Kind: monitor.MarkStarted, PID: 4242, Label: "train.py"},
	}
	return s
}

// comfyPath is the golden ComfyUI environment, the one the environments
// window shows: an app's name, a guard, and CUDA libraries whose kernels
// run on the A100 (torch's sm_80), reach it through PTX only
// (llama-cpp-python's) or are not loaded.
const comfyPath = "/home/ada/comfy/.venv"

func comfyEnv() monitor.EnvReport {
	site := comfyPath + "/lib/python3.12/site-packages/"
	ggml := site + "llama_cpp/lib/libggml-cuda.so"
	lib := func(pkg, file string, sass, ptx []string) pyenv.CUDALib {
		l := pyenv.CUDALib{Package: pkg, File: file, SASS: sass, PTX: ptx, Runtime: "libcudart.so.12"}
		l.Kernels = l.Archs().String()
		return l
	}
	libs := []pyenv.CUDALib{
		lib("torch", site+"torch/lib/libtorch_cuda.so", []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}, []string{"compute_120"}),
		lib("llama-cpp-python", ggml, []string{"sm_86", "sm_89", "sm_120"}, []string{"compute_75"}),
		lib("nvidia-cublas-cu12", site+"nvidia/cublas/lib/libcublasLt.so.12", []string{"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}, []string{"compute_90"}),
	}
	env := &pyenv.Env{Path: comfyPath, App: "ComfyUI", Python: "3.12", Layout: pyenv.LayoutPOSIX, Installer: "uv", Kind: "venv", CUDALibs: libs,
		Packages: map[string]*pyenv.Package{
			"torch":            {Version: "2.7.1+cu128", Build: pyenv.BuildCUDA, CUDA: "12.8", Installer: "uv"},
			"torchvision":      {Version: "0.22.1+cu128", Build: pyenv.BuildCUDA, CUDA: "12.8"},
			"llama-cpp-python": {Version: "0.3.16", Build: pyenv.BuildCUDA, Backends: []string{"cuda", "cpu"}, Installer: "uv"},
		}}
	gpu := "NVIDIA A100-SXM4-40GB (sm_80)"
	return monitor.EnvReport{Env: env, Verdict: monitor.VerdictWarning, Guarded: true, Findings: []finding.Finding{{
		Code: finding.CodeCUDAKernelsMissing, Severity: finding.SeverityWarning,
		Message: "libggml-cuda.so of llama-cpp-python 0.3.16 (" + ggml + ") has no machine code for " + gpu + " (it carries " + libs[1].Kernels + "). On " + gpu +
			" it runs only through compute_75 PTX, which the driver compiles just in time: the first start takes minutes, and the driver must support that PTX version.",
		Evidence: []pyenv.Evidence{{File: ggml, Says: "carries " + libs[1].Kernels}}}}}
}

// goldenDeps are the golden windows' dependencies: the fixed engine, and
// a guard on the ComfyUI environment.
func goldenDeps() Deps {
	return Deps{Engine: fixedEngine{}, Config: config.Default(), Guard: goldenGuard{}}
}

// goldenGuard is the golden machine's guard: set on the ComfyUI
// environment alone; setting or lifting it is refused.
type goldenGuard struct{}

func (goldenGuard) Guard(string) ([]string, []string, error) { return nil, nil, errors.New("golden") }
func (goldenGuard) Guarded(env string) bool                  { return env == comfyPath }
func (goldenGuard) Unguard(string) ([]string, error)         { return nil, errors.New("golden") }

// goldenStart is when the golden processes started, 75 minutes before
// the golden windows' clock: the runtime column counts to that clock, so
// a slow run on a loaded machine draws the same "1h15m".
var goldenStart = goldenNow.Add(-75 * time.Minute)

// goldenSamples feeds w ten minutes of readings, one per refresh, ending
// at goldenNow with goldenState's: the GPU idles, train.py starts 8
// minutes ago, its memory fills, utilization, power and temperature
// climb and settle; serve.py is busy on the CPU throughout.
func goldenSamples(w *windows) { samplesOf(w, goldenState) }

// samplesOf feeds w ten minutes of readings ending at goldenNow with
// state's own, whose first process is the training run on its first GPU
// and whose second is busy on the CPU (see goldenSamples).
func samplesOf(w *windows, state func() monitor.State) {
	const ticks = 300
	for k := 0; k <= ticks; k++ {
		st := state()
		d := &st.GPU.Devices[0]
		train, serve := &st.Processes[0], &st.Processes[1]
		wave := math.Sin(float64(k)/5) + 0.5*math.Sin(float64(k)/2.3)
		run := float64(k - 60) // ticks since train.py started
		util, mem, temp, power := 0.0, 0.4, 34.0, 58.0
		if run >= 0 {
			settle := 1 - math.Exp(-run/25)
			util = 84*settle + 4*wave
			mem = 0.4 + 8.6*min(1, run/10)
			temp = 34 + 27*(1-math.Exp(-run/45))
			power = 58 + 185*settle + 10*wave
			tm, cpu := uint64(mem*(1<<30)), 95+8*wave
			train.GPUMemoryBytes, train.CPUPercent = &tm, cpu
		} else {
			st.Processes = st.Processes[1:]
			serve = &st.Processes[0]
		}
		serve.CPUPercent = 375 + 20*wave
		if k < ticks { // the last reading is goldenState's own
			u, c, p := uint32(max(0, util)), uint32(temp), power
			d.UtilizationGPU, d.TemperatureC, d.PowerWatts, d.MemoryUsedBytes = &u, &c, &p, uint64(mem*(1<<30))
		}
		w.samples.Add(st, goldenNow.Add(-time.Duration(ticks-k)*refreshEvery), minSampleGap)
	}
}

// goldenEvents is a fixed history, newest first, as the engine keeps it.
func goldenEvents() []monitor.Event {
	llm := "/home/ada/work/llm/.venv"
	at := func(min int) time.Time { return goldenNow.Add(-time.Duration(min) * time.Minute) }
	return []monitor.Event{
		{Time: at(3), Kind: monitor.KindJobOnCPU, Env: llm, PID: 5151,
			Message: "`python serve.py` (PID 5151) in " + llm + " has been busy on the CPU for 25s: torch is a CPU-only build, although an NVIDIA GPU is present."},
		{Time: at(42), Kind: monitor.KindFindingRaised, Env: llm,
			Finding: &finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError},
			Message: "torch 2.10.0 is a CPU-only build, but this machine has an NVIDIA A100-SXM4-40GB."},
		{Time: at(42), Kind: monitor.KindCUDAWheelReplaced, Env: llm,
			Message: "torch in " + llm + " was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run`."},
		{Time: at(90), Kind: monitor.KindEnvAdded, Env: "/home/ada/work/vision/.venv", Message: "Watching /home/ada/work/vision/.venv."},
	}
}

// fixedEngine answers the windows with the golden state and history.
type fixedEngine struct{}

func (fixedEngine) State() monitor.State                      { return goldenState() }
func (fixedEngine) History(int) []monitor.Event               { return goldenEvents() }
func (fixedEngine) Subscribe() (<-chan monitor.Event, func()) { return nil, func() {} }
func (fixedEngine) Add(string) error                          { return nil }
func (fixedEngine) Forget(string) error                       { return nil }
func (fixedEngine) WatchEnd(int, time.Time) error             { return nil }
func (fixedEngine) QuietJob(int, time.Time) error             { return nil }

// goldenWindow is one window the golden test renders: its file name and
// how to open it on a fresh ui.
type goldenWindow struct {
	name string
	open func(w *windows) fyne.Window
}

var goldenWindows = []goldenWindow{
	{"envs", func(w *windows) fyne.Window {
		w.showEnvs()
		w.envs.selectEnv(comfyPath) // an app's, guarded, with CUDA libraries and a finding
		return w.envs.win
	}},
	{"procs", func(w *windows) fyne.Window {
		w.showProcesses()
		// A click on a cell in the middle of a row selects the whole
		// row; the row stuck on the CPU stands out beside it.
		row := 0
		for i, r := range w.procs.rows {
			if r.PID == 4242 {
				row = i
			}
		}
		w.procs.table.Select(widget.TableCellID{Row: row, Col: 6})
		return w.procs.win
	}},
	{"gpus", func(w *windows) fyne.Window { w.showGPUs(); return w.gpus.win }},
	{"history", func(w *windows) fyne.Window { w.showHistory(); return w.history.win }},
	{"settings", func(w *windows) fyne.Window { w.showSettings(); return w.settings }},
}

// TestWindowGolden renders every window from a fixed state at the size it
// opens with and at 1280×800, and compares them with testdata/*.png
// (Fyne's test renderer is deterministic; a failed run writes
// testdata/failed/*.png to look at). At its own size each window's
// content must fit: nothing may be cut off at an edge.
func TestWindowGolden(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // Settings reads whether it starts at login
	for _, gw := range goldenWindows {
		for _, size := range []fyne.Size{{}, {Width: 1280, Height: 800}} {
			name := gw.name + "-default.png"
			if !size.IsZero() {
				name = fmt.Sprintf("%s-%.0fx%.0f.png", gw.name, size.Width, size.Height)
			}
			t.Run(name, func(t *testing.T) {
				a := test.NewTempApp(t)
				u := newUI(a, goldenDeps())
				u.now = func() time.Time { return goldenNow }
				goldenSamples(u.wins)
				win := gw.open(u.wins)
				if size.IsZero() {
					size = u.wins.sizes[win]
					if need := contentMinSize(win); need.Width > size.Width || need.Height > size.Height {
						t.Errorf("%q needs %v but opens at %v: its content is cut off", win.Title(), need, size)
					}
				}
				win.Resize(size)
				// Lay out again what changed since, as the desktop driver
				// does before each frame.
				win.Content().Refresh()
				test.AssertImageMatches(t, name, win.Canvas().Capture())
			})
		}
	}
}

// contentMinSize is the smallest window that shows all of win's content.
func contentMinSize(win fyne.Window) fyne.Size {
	s := win.Content().MinSize()
	if win.Padded() {
		s = s.AddWidthHeight(2*theme.Padding(), 2*theme.Padding())
	}
	return s
}
