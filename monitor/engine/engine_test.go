package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/store"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

var kind = monitortest.Kind

// torchOf is the torch version the engine's state shows for env.
func torchOf(t *testing.T, m *engine.Monitor, env string) string {
	t.Helper()
	for _, r := range m.State().Envs {
		if r.Path == env && r.Torch() != nil {
			return r.Torch().Version
		}
	}
	return ""
}

func TestOverwriteIsCaughtWithCulprit(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, Processes: procs.NewSource(procs.Options{})})

	if got := e.M.State().Envs; len(got) != 1 || got[0].Torch() == nil || got[0].Torch().CUDA != "12.1" {
		t.Fatalf("initial state: %+v", got)
	}
	f.Install(t, venv, "2.5.1+cpu")
	ev := e.Wait(10*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))

	if ev.Before == nil || ev.Before.Version != "2.5.1+cu121" || ev.Before.CUDA != "12.1" {
		t.Errorf("before = %+v", ev.Before)
	}
	if ev.After == nil || ev.After.Build != pyenv.BuildCPU || ev.After.Version != "2.5.1+cpu" {
		t.Errorf("after = %+v", ev.After)
	}
	if ev.Culprit == nil || ev.Culprit.Installer != "pip" {
		t.Fatalf("culprit = %+v", ev.Culprit)
	}
	if ev.Culprit.PID == 0 || !strings.Contains(ev.Culprit.Command, "pip") || !strings.Contains(ev.Culprit.Command, venv) {
		t.Errorf("installing process not caught: %+v", ev.Culprit)
	}
	if !ev.Notify {
		t.Error("the overwrite was not marked for notification")
	}
	if !strings.Contains(ev.Message, "2.5.1+cu121 (CUDA 12.1) → 2.5.1+cpu (CPU only)") {
		t.Errorf("message = %q", ev.Message)
	}
	if !strings.Contains(ev.Fix, "cu124") {
		t.Errorf("fix = %q, want a reinstall from cu124 (A100, driver CUDA 12.4)", ev.Fix)
	}
	// The finding it causes is raised but not told twice.
	fr := e.Wait(2*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeTorchCPUBuild))
	if fr.Notify {
		t.Error("TORCH_CPU_BUILD was notified on top of CUDA_WHEEL_REPLACED")
	}
	// One overwrite, one event: no TORCH_REMOVED from pip's half-way state.
	if n := e.Count(kind(monitor.KindTorchRemoved, venv)); n != 0 {
		t.Errorf("%d TORCH_REMOVED events during a reinstall:\n%s", n, e.Dump())
	}
	if n := e.Count(kind(monitor.KindCUDAWheelReplaced, venv)); n != 1 {
		t.Errorf("%d CUDA_WHEEL_REPLACED events, want 1", n)
	}

	// Putting the CUDA build back clears the finding.
	f.Install(t, venv, "2.5.1+cu121")
	e.Wait(10*time.Second, monitortest.Finding(monitor.KindFindingCleared, finding.CodeTorchCPUBuild))
}

// TestAStopDuringTheFirstReadForgetsNothing: a run stopped before its
// first read finished (Ctrl-C while another environment's read hangs)
// learned nothing, so it saves nothing over what was remembered: the next
// run still tells the overwrite made while GPU Canary was not running.
func TestAStopDuringTheFirstReadForgetsNothing(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	st := store.Open(t.TempDir())
	opts := engine.Options{Paths: []string{venv}, Store: st, GPU: monitortest.SimGPU(t, monitortest.A100), Interval: time.Hour, Rediscover: -1}

	first := monitortest.Start(t, opts)
	first.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before the read: every read ends with ctx's error
	if err := engine.New(opts).Run(ctx); err != nil {
		t.Fatal(err)
	}

	f.Install(t, venv, "2.5.1+cpu")
	third := monitortest.Start(t, opts)
	ev := third.Wait(5*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	if !ev.Offline || !strings.Contains(ev.Message, "2.5.1+cu121") {
		t.Errorf("offline event after an interrupted run = %+v", ev)
	}
	if n := third.Count(monitortest.Finding(monitor.KindFindingRaised, finding.CodeEnvUnreadable)); n != 0 {
		t.Errorf("the interrupted read became a finding:\n%s", third.Dump())
	}
}

func TestChangeWhileStoppedIsReportedOnStart(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	st := store.Open(t.TempDir())

	first := monitortest.Start(t, engine.Options{Paths: []string{venv}, Store: st})
	first.Stop()

	f.Install(t, venv, "2.5.1+cpu")

	second := monitortest.Start(t, engine.Options{Paths: []string{venv}, Store: st})
	ev := second.Wait(5*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	if !ev.Offline || !strings.Contains(ev.Message, "when last seen on") || !strings.Contains(ev.Message, "2.5.1+cu121") {
		t.Errorf("offline event = %+v", ev)
	}
	if ev.Culprit == nil || ev.Culprit.Installer != "pip" {
		t.Errorf("culprit = %+v", ev.Culprit)
	}
	if n := second.Count(kind(monitor.KindEnvAdded, venv)); n != 0 {
		t.Errorf("a remembered environment was announced as new")
	}
	second.Stop()

	// The history survived both runs.
	hist, _, err := store.History[monitor.Event](st, store.HistoryLimit)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, h := range hist {
		kinds = append(kinds, string(h.Kind))
	}
	if !strings.Contains(strings.Join(kinds, " "), "ENV_ADDED") || !strings.Contains(strings.Join(kinds, " "), "CUDA_WHEEL_REPLACED") {
		t.Errorf("history = %v", kinds)
	}
}

func TestEnvironmentDeletedAndRecreated(t *testing.T) {
	f := monitortest.NewTorches(t)
	proj := filepath.Join(t.TempDir(), "proj")
	venv := f.Venv(t, filepath.Join(proj, ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}})

	if err := os.RemoveAll(venv); err != nil {
		t.Fatal(err)
	}
	e.Wait(10*time.Second, kind(monitor.KindEnvRemoved, venv))

	f.Venv(t, venv)
	e.Wait(10*time.Second, kind(monitor.KindEnvAdded, venv))
	// The watches are back: an overwrite of the new environment is caught.
	f.Install(t, venv, "2.5.1+cpu")
	e.Wait(10*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
}

func TestNewEnvironmentInRootIsFound(t *testing.T) {
	f := monitortest.NewTorches(t)
	root := t.TempDir()
	first := f.Venv(t, filepath.Join(root, "a", ".venv"))
	e := monitortest.Start(t, engine.Options{Discover: envsearch.Options{Roots: []string{root}, Home: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" }}})
	e.Wait(5*time.Second, kind(monitor.KindEnvAdded, first))

	second := filepath.Join(root, "b-env")
	f.Venv(t, second)
	e.Wait(10*time.Second, kind(monitor.KindEnvAdded, second))
}

func TestFiftyEnvironments(t *testing.T) {
	f := monitortest.NewTorches(t)
	root := t.TempDir()
	model := f.Venv(t, filepath.Join(root, "env00"))
	var paths []string
	paths = append(paths, model)
	for i := 1; i < 50; i++ {
		p := filepath.Join(root, fmt.Sprintf("env%02d", i))
		if out, err := exec.Command("cp", "-a", model, p).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		paths = append(paths, p)
	}
	e := monitortest.Start(t, engine.Options{Paths: paths})
	if n := len(e.M.State().Envs); n != 50 {
		t.Fatalf("%d environments in state, want 50", n)
	}
	target := paths[37]
	f.Install(t, target, "2.5.1+cpu")
	e.Wait(10*time.Second, kind(monitor.KindCUDAWheelReplaced, target))
	// A second overwrite ends the first one's burst: once its change is
	// seen, a repeat of the first could only have come before it.
	f.Install(t, target, "2.5.1+cu121")
	e.Wait(10*time.Second, func(ev monitor.Event) bool {
		return ev.Kind == monitor.KindTorchChanged && ev.Env == target && ev.After != nil && ev.After.Version == "2.5.1+cu121"
	})
	if n := e.Count(kind(monitor.KindCUDAWheelReplaced, "")); n != 1 {
		t.Errorf("%d CUDA_WHEEL_REPLACED events for one overwrite:\n%s", n, e.Dump())
	}
	if w := monitortest.InotifyWatches(t); w > 3*50+5 {
		t.Errorf("%d inotify watches for 50 environments; goal is at most 3 each", w)
	}
}

func TestBurstOfEventsStillReportsOverwrite(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}})
	site := wheeltest.SitePackages(t, venv)

	// Tens of thousands of events: create and delete 15000 files while
	// the real overwrite runs.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		junk := filepath.Join(site, "junk")
		for i := 0; i < 15000; i++ {
			p := fmt.Sprintf("%s-%d.txt", junk, i)
			if err := os.WriteFile(p, nil, 0o644); err == nil {
				os.Remove(p)
			}
		}
	}()
	f.Install(t, venv, "2.5.1+cpu")
	wg.Wait()
	e.Wait(15*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
}

func TestOverflowRescansAndSaysSo(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}})

	// The kernel's queue overflowed while torch was replaced: the events
	// of the overwrite are lost, only the overflow is reported.
	engine.LoseSiteEvents(e.M, wheeltest.SitePackages(t, venv))
	f.Install(t, venv, "2.5.1+cpu")
	engine.Overflow(e.M)

	e.Wait(5*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	ev := e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeWatchDegraded))
	if !strings.Contains(ev.Message, "overflowed") {
		t.Errorf("message = %q", ev.Message)
	}
}

func TestInotifyLimitFallsBackToPolling(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	m := engine.New(engine.Options{Paths: []string{venv}, GPU: monitortest.SimGPU(t, monitortest.A100), Interval: 200 * time.Millisecond, Rediscover: -1})
	engine.SetAddWatch(m, func(fsw *fsnotify.Watcher, p string) error {
		if strings.HasSuffix(p, "site-packages") {
			return fmt.Errorf("adding watch %s: %w", p, syscall.ENOSPC)
		}
		return fsw.Add(p)
	})
	e := monitortest.Run(t, m)

	f.Install(t, venv, "2.5.1+cpu")
	e.Wait(10*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	e.Wait(2*time.Second, func(e monitor.Event) bool {
		return monitortest.Finding(monitor.KindFindingRaised, finding.CodeWatchDegraded)(e) && strings.Contains(e.Message, "max_user_watches")
	})
}

// TestNoFileWatcherPollsInstead: when the kernel refuses a file watcher
// (fs.inotify.max_user_instances reached), the engine still runs: it says
// watching is degraded and why, and polls, so a CPU torch installed over
// the CUDA one is still caught.
func TestNoFileWatcherPollsInstead(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	m := engine.New(engine.Options{Paths: []string{venv}, GPU: monitortest.SimGPU(t, monitortest.A100), Interval: 200 * time.Millisecond, Rediscover: -1})
	engine.SetNewFS(m, func() (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("inotify_init1: %w", syscall.EMFILE)
	})
	e := monitortest.Run(t, m)
	e.Wait(5*time.Second, func(e monitor.Event) bool {
		return monitortest.Finding(monitor.KindFindingRaised, finding.CodeWatchDegraded)(e) &&
			strings.Contains(e.Message, "max_user_instances") && strings.Contains(e.Message, "polled every 200ms")
	})
	if n := len(e.M.State().Envs); n != 1 {
		t.Fatalf("%d environments without a file watcher, want 1\n%s", n, e.Dump())
	}
	f.Install(t, venv, "2.5.1+cpu")
	e.Wait(10*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	if n := e.Count(func(e monitor.Event) bool { return e.Finding != nil && strings.Contains(e.Message, "max_user_watches") }); n != 0 {
		t.Errorf("the watch-limit message was raised as well\n%s", e.Dump())
	}
}

// TestHalfFinishedInstallIsNotAChange replays pip's steps one by one: the
// old torch moved aside to ~orch, the new one written, the stash removed.
// The engine reads the environment after each step (its clock stands
// still, so no wait for an install runs out); only the end state is
// reported.
func TestHalfFinishedInstallIsNotAChange(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	cpu := filepath.Join(t.TempDir(), "cpu")
	f.Venv(t, cpu)
	f.Install(t, cpu, "2.5.1+cpu")
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, Clock: monitortest.NewClock(time.Now())})

	site, cpuSite := wheeltest.SitePackages(t, venv), wheeltest.SitePackages(t, cpu)
	step := func(what string, fn func() error) {
		t.Helper()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := engine.ReadNow(e.M, venv); err != nil {
			t.Fatal(err)
		}
		if v := torchOf(t, e.M, venv); v != "2.5.1+cu121" {
			t.Fatalf("after %s, the state shows torch %q: a half-finished install was taken for a change\n%s", what, v, e.Dump())
		}
	}
	step("stash torch", func() error { return os.Rename(filepath.Join(site, "torch"), filepath.Join(site, "~orch")) })
	step("stash dist-info", func() error {
		return os.Rename(filepath.Join(site, "torch-2.5.1+cu121.dist-info"), filepath.Join(site, "~orch-2.5.1+cu121.dist-info"))
	})
	step("new torch", func() error { return os.Rename(filepath.Join(cpuSite, "torch"), filepath.Join(site, "torch")) })
	step("new dist-info", func() error {
		return os.Rename(filepath.Join(cpuSite, "torch-2.5.1+cpu.dist-info"), filepath.Join(site, "torch-2.5.1+cpu.dist-info"))
	})
	if err := os.RemoveAll(filepath.Join(site, "~orch")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(site, "~orch-2.5.1+cu121.dist-info")); err != nil {
		t.Fatal(err)
	}
	if err := engine.ReadNow(e.M, venv); err != nil {
		t.Fatal(err)
	}
	e.Wait(5*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	e.Stop()
	for _, k := range []monitor.Kind{monitor.KindTorchRemoved, monitor.KindTorchInstalled, monitor.KindTorchChanged} {
		if n := e.Count(kind(k, venv)); n != 0 {
			t.Errorf("%d %s events from a half-finished install:\n%s", n, k, e.Dump())
		}
	}
}

// TestStashLeftBehindDoesNotHideChanges: a ~orch folder a crashed pip left
// behind looks like an install in progress; the engine waits for it
// exactly MaxInstallWait on its clock, then reports what is installed.
func TestStashLeftBehindDoesNotHideChanges(t *testing.T) {
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), ".venv"))
	site := wheeltest.SitePackages(t, venv)
	if err := os.MkdirAll(filepath.Join(site, "~orch", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	clock := monitortest.NewClock(time.Now())
	const wait = 10 * time.Second
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, MaxInstallWait: wait, Clock: clock})
	f.Install(t, venv, "2.5.1+cpu")

	for _, after := range []time.Duration{0, wait - time.Millisecond} {
		clock.Advance(after)
		if err := engine.ReadNow(e.M, venv); err != nil {
			t.Fatal(err)
		}
		if v := torchOf(t, e.M, venv); v != "2.5.1+cu121" {
			t.Fatalf("%s into the wait, the state shows torch %q", after, v)
		}
	}
	clock.Advance(time.Millisecond)
	if err := engine.ReadNow(e.M, venv); err != nil {
		t.Fatal(err)
	}
	e.Wait(5*time.Second, kind(monitor.KindCUDAWheelReplaced, venv))
	e.Wait(5*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeTorchInstallBroken))
}

// TestGPUStateChange: the GPU is polled on the engine's clock; a driver
// that vanishes is told, and raises NO_GPU_DRIVER.
func TestGPUStateChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(path, []byte(monitortest.A100), 0o644); err != nil {
		t.Fatal(err)
	}
	b := gpu.Open(gpu.Options{SimFile: path})
	defer b.Close()
	clock := monitortest.NewClock(time.Now())
	const every = time.Second
	e := monitortest.Start(t, engine.Options{Discover: envsearch.Options{Paths: []string{}, Home: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" }}, GPU: b, Clock: clock, Interval: every})

	if err := os.WriteFile(path, []byte(`{"devices": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(path, future, future)
	clock.Advance(every)
	ev := e.Wait(5*time.Second, kind(monitor.KindGPUStateChanged, ""))
	if !strings.Contains(ev.Message, "no longer answers") {
		t.Errorf("message = %q", ev.Message)
	}
	e.Wait(2*time.Second, monitortest.Finding(monitor.KindFindingRaised, finding.CodeNoGPUDriver))
}
