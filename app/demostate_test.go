package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/demo"
	eng "github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// demoHome is where the screenshots say the demonstration's home is: a
// person's, not the temporary folder the test writes it in.
const demoHome = "/home/ada"

// The screenshots' two processes: a training run on the healthy venv's
// CUDA torch, and a chat server that `uv run` put on a CPU build. Their
// PIDs have seven digits, as on a machine up for weeks, and the
// training's command is as long as real ones are.
const (
	demoTrainPID = 2718281
	demoChatPID  = 3141592
)

var demoTrainCmd = []string{"python", "train.py", "--config", "configs/sdxl-lora.yaml", "--output-dir", demoHome + "/runs/sdxl-lora-2026-03-14",
	"--resume-from-checkpoint", "latest", "--mixed-precision", "bf16"}

// demoState is what the engine reads from `gpucanary demo`'s home and its
// two simulated GPUs, as the README's screenshots show it: the demo is
// written into a temporary folder and read by a real engine, then its
// paths are said as under demoHome and its times fixed, so that every
// run draws the same pixels; the demo's processes (which a simulated GPU
// only lists by PID) are added as a demo user would run them.
func demoState(t *testing.T) monitor.State {
	t.Helper()
	d, err := demo.Write(filepath.Join(t.TempDir(), "demo"))
	if err != nil {
		t.Fatal(err)
	}
	// The files' times are the environments' "changed" times.
	changed := goldenNow.Add(-42 * time.Minute)
	filepath.WalkDir(d.Dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, changed, changed)
		}
		return nil
	})
	// The fix commands name the installer found on PATH (the venvs the
	// demo writes have no interpreter of their own): the test's PATH
	// holds python3 alone, so that a uv installed on this machine does
	// not change the pictures.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH (make deps-test installs it)")
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	b := gpu.Open(gpu.Options{SimFile: d.Scenario})
	t.Cleanup(func() { b.Close() })
	m := monitortest.Start(t, eng.Options{Paths: d.Envs, GPU: b})
	raw, err := json.Marshal(m.M.State())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(raw), filepath.Join(bin, "python3")+" ", "/usr/bin/python3 ")
	text = strings.ReplaceAll(text, d.Home, demoHome)
	text = strings.ReplaceAll(text, d.Dir, demoHome+"/gpucanary-demo")
	var st monitor.State
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		t.Fatal(err)
	}
	st.LastRead, st.Polled, st.LastReadDuration = goldenNow, goldenNow, 0

	u32 := func(v uint32) *uint32 { return &v }
	f64 := func(v float64) *float64 { return &v }
	mem, none := uint64(9<<30), uint64(0)
	d0 := &st.GPU.Devices[0]
	d0.MemoryUsedBytes, d0.UtilizationGPU, d0.TemperatureC, d0.PowerWatts = mem+(400<<20), u32(87), u32(61), f64(250)
	vision, chatbot := demoHome+"/work/vision/.venv", demoHome+"/work/chatbot/.venv"
	st.Processes = []monitor.Process{
		{Row: procs.Row{Proc: procs.Proc{PID: demoTrainPID, User: "ada", Name: "python", Cmdline: demoTrainCmd, CPUPercent: 104, RSSBytes: 7 << 30, StartTime: goldenStart, EnvPath: vision},
			GPUs: []int{0}, GPUMemoryBytes: &mem, SMPercent: u32(87), Verdict: procs.VerdictGPU, Reason: "holds 9.0 GiB on GPU 0"}},
		{Row: procs.Row{Proc: procs.Proc{PID: demoChatPID, User: "ada", Name: "python", Cmdline: []string{"python", "chat.py", "--port", "8080"}, CPUPercent: 385, RSSBytes: 11 << 30, StartTime: goldenStart, EnvPath: chatbot},
			GPUs: []int{}, GPUMemoryBytes: &none, Verdict: procs.VerdictCPU, JobOnCPU: true, BusyFor: 3*time.Minute + 25*time.Second,
			Reason: "busy on the CPU for 3m25s: torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present"}},
	}
	return st
}

// demoEvents is the demonstration's history, newest first.
func demoEvents(st monitor.State) []monitor.Event {
	chatbot := demoHome + "/work/chatbot/.venv"
	at := func(min int) time.Time { return goldenNow.Add(-time.Duration(min) * time.Minute) }
	return []monitor.Event{
		{Time: at(3), Kind: monitor.KindJobOnCPU, Env: chatbot, PID: demoChatPID,
			Message: "`python chat.py --port 8080` (PID 3141592) in " + chatbot + " has been busy on the CPU for 25s: torch is a CPU-only build, although an NVIDIA GPU is present."},
		{Time: at(42), Kind: monitor.KindFindingRaised, Env: chatbot,
			Finding: &finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError},
			Message: "torch 2.5.1+cpu is a CPU-only build, but this machine has an NVIDIA GeForce RTX 4090."},
		{Time: at(42), Kind: monitor.KindCUDAWheelReplaced, Env: chatbot,
			Message: "torch in " + chatbot + " was replaced: 2.5.1+cu124 (CUDA 12.4) → 2.5.1+cpu (CPU only), by `uv run`."},
		{Time: at(90), Kind: monitor.KindEnvAdded, Env: demoHome + "/work/vision/.venv", Message: "Watching " + demoHome + "/work/vision/.venv."},
	}
}

// demoEngine answers the windows with the demo's state and history.
type demoEngine struct {
	stateEngine
	events []monitor.Event
}

func (e *demoEngine) History(int) []monitor.Event { return e.events }

// demoDeps are the screenshots' dependencies: the demo's state, and its
// repair, planned but never run.
func demoDeps(st monitor.State) Deps {
	return Deps{Engine: &demoEngine{stateEngine: stateEngine{state: st}, events: demoEvents(st)}, Config: config.Default(), Repair: demoRepairer{st}}
}

// demoRepairer plans a repair of a demo environment as `gpucanary fix`
// does (monitor/fixplan over the environment read and the GPUs), with
// the host's pip (python3 -m pip --python) and no uv; the chat server
// runs from the environment `uv run` broke. It never runs anything.
type demoRepairer struct{ st monitor.State }

func (r demoRepairer) Plan(_ context.Context, path string) (fixplan.Plan, error) {
	for _, e := range r.st.Envs {
		if e.Path == path {
			return fixplan.NewPlan(fixplan.Request{Env: e.Env, GPU: r.st.GPU, HostPython: "/usr/bin/python3",
				LookPath: func(string) (string, error) { return "", exec.ErrNotFound }})
		}
	}
	return fixplan.Plan{}, fmt.Errorf("%s is not a demo environment", path)
}

func (r demoRepairer) InUse(_ context.Context, path string) error {
	e := &fix.InUseError{Env: path}
	for _, p := range r.st.Processes {
		if p.EnvPath == path {
			proc := p.Proc
			if me, err := user.Current(); err == nil {
				proc.User = me.Username // so that the dialog offers to stop it
			}
			e.Processes = append(e.Processes, fmt.Sprintf("PID %d (%s)", p.PID, p.Command()))
			e.Procs = append(e.Procs, proc)
		}
	}
	if len(e.Procs) == 0 {
		return nil
	}
	return e
}

func (demoRepairer) Run(context.Context, fixplan.Plan, func(string)) (fixjournal.Result, error) {
	return fixjournal.Result{}, errors.New("the screenshots' repair never runs")
}

func (r demoRepairer) RunAnyway(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error) {
	return r.Run(ctx, p, line)
}

// demoWindows open the screenshots' windows on what each shows best: the
// environment `uv run` broke, with its Repair…; the training run's row.
var demoWindows = map[string]func(w *windows) fyne.Window{
	"envs": func(w *windows) fyne.Window {
		w.showEnvs()
		w.envs.selectEnv(demoHome + "/work/chatbot/.venv")
		return w.envs.win
	},
	"procs": func(w *windows) fyne.Window {
		w.showProcesses()
		for i, r := range w.procs.rows {
			if r.PID == demoTrainPID {
				w.procs.table.Select(widget.TableCellID{Row: i, Col: 6})
			}
		}
		return w.procs.win
	},
	// The confirm dialog of the Repair… beside the broken environment's
	// finding, naming the chat server that runs from it.
	"repair": func(w *windows) fyne.Window {
		path := demoHome + "/work/chatbot/.venv"
		w.showEnvs()
		w.envs.selectEnv(path)
		w.u.reinstall(path)
		return w.envs.win
	},
	"gpus":    func(w *windows) fyne.Window { w.showGPUs(); return w.gpus.win },
	"history": func(w *windows) fyne.Window { w.showHistory(); return w.history.win },
}

// cloneState is st with its own GPU and process lists, which samplesOf
// changes in place.
func cloneState(st monitor.State) monitor.State {
	st.GPU.Devices = slices.Clone(st.GPU.Devices)
	st.Processes = slices.Clone(st.Processes)
	return st
}
