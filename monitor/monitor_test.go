package monitor

import (
	"context"
	"errors"
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

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/store"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// a100 is a simulated A100 on driver 550 (CUDA 12.4).
const a100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}`

// fixture is a find-links folder with CUDA and CPU torch wheeltest.
type fixture struct {
	py    string
	links string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{py: wheeltest.Python(t), links: t.TempDir()}
	for _, s := range []wheeltest.Spec{wheeltest.Torch("2.5.1", "cu121"), wheeltest.Torch("2.5.1", "cpu"), wheeltest.Torch("2.5.1", "cu124")} {
		if _, err := wheeltest.Write(f.links, s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// venv makes a venv at dir with torch 2.5.1+cu121 installed by real pip.
func (f fixture) venv(t *testing.T, dir string) string {
	t.Helper()
	wheeltest.NewVenv(t, f.py, dir)
	f.install(t, dir, "2.5.1+cu121")
	return dir
}

// install force-reinstalls torch==version in venv from the find-links folder.
func (f fixture) install(t *testing.T, venv, version string) {
	t.Helper()
	wheeltest.Pip(t, f.py, venv, "install", "--no-index", "--find-links", f.links, "--force-reinstall", "torch=="+version)
}

func simGPU(t testing.TB, scenario string) gpu.Backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	b := gpu.Open(gpu.Options{SimFile: path})
	t.Cleanup(func() { b.Close() })
	return b
}

// engine runs a monitor for a test and collects its events.
type engine struct {
	t      *testing.T
	m      *Monitor
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	events []Event
	notify chan struct{}
}

func startEngine(t *testing.T, o Options) *engine {
	t.Helper()
	if o.GPU == nil {
		o.GPU = simGPU(t, a100)
	}
	if o.Interval == 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.Rediscover == 0 {
		o.Rediscover = -1
	}
	return runEngine(t, New(o))
}

// runEngine runs m, collecting its events, until the test ends.
func runEngine(t *testing.T, m *Monitor) *engine {
	t.Helper()
	e := &engine{t: t, m: m, done: make(chan struct{}), notify: make(chan struct{}, 1)}
	ch, _ := e.m.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() {
		for ev := range ch {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
			select {
			case e.notify <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		defer close(e.done)
		if err := e.m.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(e.stop)
	e.waitStarted()
	return e
}

func (e *engine) waitStarted() {
	deadline := time.Now().Add(10 * time.Second)
	for !e.m.State().Started {
		if time.Now().After(deadline) {
			e.t.Fatal("engine did not start in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *engine) stop() {
	e.cancel()
	<-e.done
}

// wait returns the first event (after skip earlier ones) that matches, or
// fails after timeout.
func (e *engine) wait(timeout time.Duration, match func(Event) bool) Event {
	e.t.Helper()
	deadline := time.After(timeout)
	for {
		e.mu.Lock()
		for _, ev := range e.events {
			if match(ev) {
				e.mu.Unlock()
				return ev
			}
		}
		e.mu.Unlock()
		select {
		case <-e.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			e.t.Fatalf("no matching event in %s; events:\n%s", timeout, e.dump())
			return Event{}
		}
	}
}

func (e *engine) count(match func(Event) bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if match(ev) {
			n++
		}
	}
	return n
}

func (e *engine) dump() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.events {
		fmt.Fprintf(&b, "  %s %s %s\n", ev.Kind, ev.Env, ev.Message)
	}
	return b.String()
}

func kind(k, env string) func(Event) bool {
	return func(e Event) bool { return e.Kind == k && (env == "" || e.Env == env) }
}

func TestOverwriteIsCaughtWithCulprit(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	e := startEngine(t, Options{Paths: []string{venv}})

	if got := e.m.State().Envs; len(got) != 1 || got[0].Torch() == nil || got[0].Torch().CUDA != "12.1" {
		t.Fatalf("initial state: %+v", got)
	}
	f.install(t, venv, "2.5.1+cpu")
	ev := e.wait(10*time.Second, kind(KindCUDAWheelReplaced, venv))

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
	fr := e.wait(2*time.Second, func(e Event) bool {
		return e.Kind == KindFindingRaised && e.Finding != nil && e.Finding.Code == health.CodeTorchCPUBuild
	})
	if fr.Notify {
		t.Error("TORCH_CPU_BUILD was notified on top of CUDA_WHEEL_REPLACED")
	}
	// One overwrite, one event: no TORCH_REMOVED from pip's half-way state.
	if n := e.count(kind(KindTorchRemoved, venv)); n != 0 {
		t.Errorf("%d TORCH_REMOVED events during a reinstall:\n%s", n, e.dump())
	}
	if n := e.count(kind(KindCUDAWheelReplaced, venv)); n != 1 {
		t.Errorf("%d CUDA_WHEEL_REPLACED events, want 1", n)
	}

	// Putting the CUDA build back clears the finding.
	f.install(t, venv, "2.5.1+cu121")
	e.wait(10*time.Second, func(e Event) bool {
		return e.Kind == KindFindingCleared && e.Finding != nil && e.Finding.Code == health.CodeTorchCPUBuild
	})
}

func TestChangeWhileStoppedIsReportedOnStart(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	st := store.Open(t.TempDir())

	first := startEngine(t, Options{Paths: []string{venv}, Store: st})
	first.stop()

	f.install(t, venv, "2.5.1+cpu")

	second := startEngine(t, Options{Paths: []string{venv}, Store: st})
	ev := second.wait(5*time.Second, kind(KindCUDAWheelReplaced, venv))
	if !ev.Offline || !strings.Contains(ev.Message, "when last seen on") || !strings.Contains(ev.Message, "2.5.1+cu121") {
		t.Errorf("offline event = %+v", ev)
	}
	if ev.Culprit == nil || ev.Culprit.Installer != "pip" {
		t.Errorf("culprit = %+v", ev.Culprit)
	}
	if n := second.count(kind(KindEnvAdded, venv)); n != 0 {
		t.Errorf("a remembered environment was announced as new")
	}
	second.stop()

	// The history survived both runs.
	hist, err := store.History[Event](st)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, h := range hist {
		kinds = append(kinds, h.Kind)
	}
	if !strings.Contains(strings.Join(kinds, " "), "ENV_ADDED") || !strings.Contains(strings.Join(kinds, " "), "CUDA_WHEEL_REPLACED") {
		t.Errorf("history = %v", kinds)
	}
}

func TestEnvironmentDeletedAndRecreated(t *testing.T) {
	f := newFixture(t)
	proj := filepath.Join(t.TempDir(), "proj")
	venv := f.venv(t, filepath.Join(proj, ".venv"))
	e := startEngine(t, Options{Paths: []string{venv}})

	if err := os.RemoveAll(venv); err != nil {
		t.Fatal(err)
	}
	e.wait(10*time.Second, kind(KindEnvRemoved, venv))

	f.venv(t, venv)
	e.wait(10*time.Second, kind(KindEnvAdded, venv))
	// The watches are back: an overwrite of the new environment is caught.
	f.install(t, venv, "2.5.1+cpu")
	e.wait(10*time.Second, kind(KindCUDAWheelReplaced, venv))
}

func TestNewEnvironmentInRootIsFound(t *testing.T) {
	f := newFixture(t)
	root := t.TempDir()
	first := f.venv(t, filepath.Join(root, "a", ".venv"))
	e := startEngine(t, Options{Discover: pyenv.DiscoverOptions{Roots: []string{root}, Getenv: func(string) string { return "" }}})
	e.wait(5*time.Second, kind(KindEnvAdded, first))

	second := filepath.Join(root, "b-env")
	f.venv(t, second)
	e.wait(10*time.Second, kind(KindEnvAdded, second))
}

func TestFiftyEnvironments(t *testing.T) {
	f := newFixture(t)
	root := t.TempDir()
	model := f.venv(t, filepath.Join(root, "env00"))
	var paths []string
	paths = append(paths, model)
	for i := 1; i < 50; i++ {
		p := filepath.Join(root, fmt.Sprintf("env%02d", i))
		if out, err := exec.Command("cp", "-a", model, p).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		paths = append(paths, p)
	}
	e := startEngine(t, Options{Paths: paths})
	if n := len(e.m.State().Envs); n != 50 {
		t.Fatalf("%d environments in state, want 50", n)
	}
	target := paths[37]
	f.install(t, target, "2.5.1+cpu")
	e.wait(10*time.Second, kind(KindCUDAWheelReplaced, target))
	time.Sleep(500 * time.Millisecond)
	if n := e.count(kind(KindCUDAWheelReplaced, "")); n != 1 {
		t.Errorf("%d CUDA_WHEEL_REPLACED events for one overwrite:\n%s", n, e.dump())
	}
	if w := inotifyWatches(t); w > 3*50+5 {
		t.Errorf("%d inotify watches for 50 environments; goal is at most 3 each", w)
	}
}

func TestBurstOfEventsStillReportsOverwrite(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	e := startEngine(t, Options{Paths: []string{venv}})
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
	f.install(t, venv, "2.5.1+cpu")
	wg.Wait()
	e.wait(15*time.Second, kind(KindCUDAWheelReplaced, venv))
}

func TestOverflowRescansAndSaysSo(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	e := startEngine(t, Options{Paths: []string{venv}})

	// The kernel's queue overflowed while torch was replaced: the events
	// of the overwrite are lost, only the overflow is reported.
	e.m.w.mu.Lock()
	delete(e.m.w.sites, wheeltest.SitePackages(t, venv))
	e.m.w.mu.Unlock()
	f.install(t, venv, "2.5.1+cpu")
	e.m.w.fs.Errors <- fsnotify.ErrEventOverflow

	e.wait(5*time.Second, kind(KindCUDAWheelReplaced, venv))
	ev := e.wait(5*time.Second, func(e Event) bool {
		return e.Kind == KindFindingRaised && e.Finding != nil && e.Finding.Code == health.CodeWatchDegraded
	})
	if !strings.Contains(ev.Message, "overflowed") {
		t.Errorf("message = %q", ev.Message)
	}
}

func TestInotifyLimitFallsBackToPolling(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	o := Options{Paths: []string{venv}, GPU: simGPU(t, a100), Interval: 200 * time.Millisecond, Rediscover: -1}
	m := New(o)
	w, err := newWatcher(m.log, 300*time.Millisecond, newFSWatcher)
	if err != nil {
		t.Fatal(err)
	}
	w.add = func(p string) error {
		if strings.HasSuffix(p, "site-packages") {
			return fmt.Errorf("adding watch %s: %w", p, syscall.ENOSPC)
		}
		return w.fs.Add(p)
	}
	m.testWatcher = w
	e := runEngine(t, m)

	f.install(t, venv, "2.5.1+cpu")
	e.wait(10*time.Second, kind(KindCUDAWheelReplaced, venv))
	e.wait(2*time.Second, func(e Event) bool {
		return e.Kind == KindFindingRaised && e.Finding != nil && e.Finding.Code == health.CodeWatchDegraded &&
			strings.Contains(e.Message, "max_user_watches")
	})
}

// TestNoFileWatcherPollsInstead: when the kernel refuses a file watcher
// (fs.inotify.max_user_instances reached), the engine still runs: it says
// watching is degraded and why, and polls, so a CPU torch installed over
// the CUDA one is still caught.
func TestNoFileWatcherPollsInstead(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	m := New(Options{Paths: []string{venv}, GPU: simGPU(t, a100), Interval: 200 * time.Millisecond, Rediscover: -1})
	m.newFS = func() (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("inotify_init1: %w", syscall.EMFILE)
	}
	e := runEngine(t, m)
	e.wait(5*time.Second, func(e Event) bool {
		return e.Kind == KindFindingRaised && e.Finding != nil && e.Finding.Code == health.CodeWatchDegraded &&
			strings.Contains(e.Message, "max_user_instances") && strings.Contains(e.Message, "polled every 200ms")
	})
	e.waitStarted()
	if n := len(e.m.State().Envs); n != 1 {
		t.Fatalf("%d environments without a file watcher, want 1\n%s", n, e.dump())
	}
	f.install(t, venv, "2.5.1+cpu")
	e.wait(10*time.Second, kind(KindCUDAWheelReplaced, venv))
	if n := e.count(func(e Event) bool { return e.Finding != nil && strings.Contains(e.Message, "max_user_watches") }); n != 0 {
		t.Errorf("the watch-limit message was raised as well\n%s", e.dump())
	}
}

// TestHalfFinishedInstallIsNotAChange replays pip's steps slowly: the old
// torch moved aside to ~orch, the new one written, the stash removed.
// Only the end state is reported.
func TestHalfFinishedInstallIsNotAChange(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	cpu := filepath.Join(t.TempDir(), "cpu")
	f.venv(t, cpu)
	f.install(t, cpu, "2.5.1+cpu")
	e := startEngine(t, Options{Paths: []string{venv}})

	site, cpuSite := wheeltest.SitePackages(t, venv), wheeltest.SitePackages(t, cpu)
	step := func(what string, fn func() error) {
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(450 * time.Millisecond) // longer than the settle time
	}
	step("stash torch", func() error { return os.Rename(filepath.Join(site, "torch"), filepath.Join(site, "~orch")) })
	step("stash dist-info", func() error {
		return os.Rename(filepath.Join(site, "torch-2.5.1+cu121.dist-info"), filepath.Join(site, "~orch-2.5.1+cu121.dist-info"))
	})
	step("new torch", func() error { return os.Rename(filepath.Join(cpuSite, "torch"), filepath.Join(site, "torch")) })
	step("new dist-info", func() error {
		return os.Rename(filepath.Join(cpuSite, "torch-2.5.1+cpu.dist-info"), filepath.Join(site, "torch-2.5.1+cpu.dist-info"))
	})
	step("drop stash", func() error {
		if err := os.RemoveAll(filepath.Join(site, "~orch")); err != nil {
			return err
		}
		return os.RemoveAll(filepath.Join(site, "~orch-2.5.1+cu121.dist-info"))
	})
	e.wait(5*time.Second, kind(KindCUDAWheelReplaced, venv))
	for _, k := range []string{KindTorchRemoved, KindTorchInstalled, KindTorchChanged} {
		if n := e.count(kind(k, venv)); n != 0 {
			t.Errorf("%d %s events from a half-finished install:\n%s", n, k, e.dump())
		}
	}
}

func TestGPUStateChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(path, []byte(a100), 0o644); err != nil {
		t.Fatal(err)
	}
	b := gpu.Open(gpu.Options{SimFile: path})
	defer b.Close()
	e := startEngine(t, Options{Paths: nil, Discover: pyenv.DiscoverOptions{Paths: []string{}, Getenv: func(string) string { return "" }}, GPU: b})

	if err := os.WriteFile(path, []byte(`{"devices": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(path, future, future)
	ev := e.wait(5*time.Second, kind(KindGPUStateChanged, ""))
	if !strings.Contains(ev.Message, "no longer answers") {
		t.Errorf("message = %q", ev.Message)
	}
	e.wait(2*time.Second, func(e Event) bool {
		return e.Kind == KindFindingRaised && e.Finding != nil && e.Finding.Code == health.CodeNoGPUDriver
	})
}

// inotifyWatches counts this process's inotify watches.
func inotifyWatches(t testing.TB) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || !strings.Contains(target, "inotify") {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		n += strings.Count(string(info), "inotify wd:")
	}
	return n
}

var _ = errors.New

// TestStashLeftBehindDoesNotHideChanges: a ~orch folder a crashed pip left
// behind looks like an install in progress; the engine waits for it only
// MaxInstallWait, then reports what is installed.
func TestStashLeftBehindDoesNotHideChanges(t *testing.T) {
	f := newFixture(t)
	venv := f.venv(t, filepath.Join(t.TempDir(), ".venv"))
	site := wheeltest.SitePackages(t, venv)
	if err := os.MkdirAll(filepath.Join(site, "~orch", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := startEngine(t, Options{Paths: []string{venv}, MaxInstallWait: time.Second})
	start := time.Now()
	f.install(t, venv, "2.5.1+cpu")
	e.wait(10*time.Second, kind(KindCUDAWheelReplaced, venv))
	if time.Since(start) > 9*time.Second {
		t.Errorf("the change waited %s", time.Since(start))
	}
	e.wait(2*time.Second, func(e Event) bool {
		return e.Kind == KindFindingRaised && e.Finding != nil && e.Finding.Code == health.CodeTorchInstallBroken
	})
}
