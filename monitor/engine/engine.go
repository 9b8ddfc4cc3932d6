// Package engine is GPU Canary's live engine: it reads every environment,
// the GPU and the processes, watches the environments' files, and
// publishes what changes as events (monitor.Event) to subscribers, with
// the notification policy's decision on each. The tray, the windows and
// `gpucanary watch` are all views of one Monitor.
//
// Its parts, each in its own file: the set of environments (envs.go), the
// one raise/clear finding diff used for environments, the machine and
// processes (findings.go), the publish hub (hub.go), what is remembered
// across restarts (memory.go), polling (poll.go), reconfiguring a running
// engine (reconfigure.go), the file watcher and its debounce (watcher.go,
// debounce.go), the notification policy (policy.go), the repairs read
// from their journals (repairs.go) and the clock (clock.go), which tests
// replace (monitortest.Clock).
//
// It imports the shared types (package monitor) and the leaves (pyenv,
// gpu, procs, health, store, and fix for its journals); never app/ nor a
// GUI toolkit.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// Options configures a Monitor. Zero values are sensible defaults.
type Options struct {
	// Paths are the environments to watch; empty means discover them
	// (Discover) and watch the discovery roots for new ones.
	Paths []string
	// Given, when set, is Paths as the caller resolved them already
	// (envsearch.ResolveArg, one per path, in order): the environments to
	// watch are made from them (envsearch.Given), so that a path typed is
	// resolved once.
	Given    []managers.Resolution
	Discover envsearch.Options
	GPU      gpu.Backend
	// Reader reads the environments, its fact stores kept by the
	// engine's caller (the command line gives them files in the user's
	// cache folder); the engine flushes them after each pass of reads.
	// Nil reads the real disk with stores in memory of the engine's own.
	Reader *pyenv.Reader
	// Processes is the process side: polled for JOB_ON_CPU, and asked
	// for the installer at the first file event of a burst. Nil leaves
	// both out.
	Processes procs.Source
	// Alive says whether a PID the driver lists runs here
	// (procs.HostPIDs), for GPU_MEMORY_ORPHANED; nil judges no GPU's
	// memory.
	Alive func(pid int) bool
	// Busy decides when a busy process off the GPU is JOB_ON_CPU.
	Busy procs.BusyRule
	// JobMinRuntime is how long a GPU job must have run for its end to
	// be JOB_ENDED (default DefaultJobMinRuntime).
	JobMinRuntime time.Duration
	// StallWindow is how long a job's GPU must stay idle holding its
	// memory, or spin at low power, to be JOB_STALLED or JOB_SPINNING
	// (default DefaultStallWindow); StallArmAfter is how long the job
	// must have computed before a stall of it is told (default
	// DefaultStallArmAfter). Tests give short ones.
	StallWindow   time.Duration
	StallArmAfter time.Duration
	Health        health.Options
	// GPUHealth are the windows of the GPU health rules (GPU_THROTTLED,
	// PCIE_DEGRADED, GPU_XID); zero values are their defaults.
	GPUHealth health.GPUWatchOptions
	// Interval is how often the GPU and processes are polled (default 2s).
	Interval time.Duration
	// Settle is how long an environment must be quiet before it is read
	// again after a file event (default 300ms).
	Settle time.Duration
	// MaxInstallWait bounds how long a half-finished install is waited for
	// before it is reported as it is (default 10s).
	MaxInstallWait time.Duration
	// Rediscover is how often discovery runs again to find environments no
	// watch could see (default 10m; negative turns it off).
	Rediscover time.Duration
	// Store remembers state and history across restarts; nil forgets.
	Store *store.Store
	// Journals is the folder of repair journals (fix.Service.JournalDir):
	// each repair they record is published as events (repairs.go). ""
	// reads none.
	Journals string
	// Guards is the state folder whose guard records (monitor/guard) say
	// which environments are guarded; a guard changed by hand is an
	// event (GUARD_CHANGED). "" reads none.
	Guards string
	// Policy decides notifications; nil means NewPolicy().
	Policy *Policy
	// RefreshKnowledge, when set (the kb_refresh setting), runs at start
	// and then every KnowledgeEvery, in its own goroutine: it teaches the
	// knowledge base newer torch releases (kbrefresh.Run) and skips a run
	// when the last was less than a day ago. Nil never runs it.
	RefreshKnowledge func(ctx context.Context) error
	// Clock is the engine's time; nil is the wall clock.
	Clock  Clock
	Logger *slog.Logger
}

// Monitor is the live engine. Run drives it; everything else is safe to
// call from any goroutine.
type Monitor struct {
	// o is read and (by Reconfigure) changed on the Run goroutine only.
	o      Options
	log    *slog.Logger
	clock  Clock
	policy *Policy

	// Shared with any goroutine; each part guards itself.
	view     view                       // the State that State() copies
	hub      hub                        // subscriptions
	culprits culprits                   // installers the watcher caught, until their env is read
	requests chan func(context.Context) // work for the Run goroutine (Add, Forget, Reconfigure)
	started  chan struct{}              // closed once the first full read is published
	stopped  chan struct{}              // closed when Run returns
	stopOnce sync.Once

	// Owned by the Run goroutine; nothing else touches them.
	envs    envSet       // the environments and their findings
	machine machineState // the GPU and the findings about the machine
	procs   processPoll  // the process side between polls
	jobs    jobWatch     // the GPU jobs held for their end (JOB_ENDED)
	memory  memory       // what is remembered across restarts
	repairs repairLog    // the repair journals published
	drops   pendingDrops // environments a settings change no longer covers
	w       *watcher
	tick    Ticker // the polling ticker, reset by Reconfigure

	// named are, with Options.Paths, the environments they name
	// (discover): the only ones a watched folder may add (isCandidate).
	named map[string]bool

	// Test hooks (export_test.go): newFS replaces the kernel's file
	// watcher, addWatch adding one watch (to simulate an inotify limit),
	// inspect reading one environment (inspect.InspectOne; to simulate
	// a read that hangs).
	newFS    func() (*fsnotify.Watcher, error)
	addWatch func(fsw *fsnotify.Watcher, path string) error
	inspect  func(ctx context.Context, f envsearch.Found, g gpu.State, o health.Options) monitor.EnvReport
}

// New makes a monitor; Run starts it.
func New(o Options) *Monitor {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 300 * time.Millisecond
	}
	if o.MaxInstallWait <= 0 {
		o.MaxInstallWait = 10 * time.Second
	}
	if o.Rediscover == 0 {
		o.Rediscover = 10 * time.Minute
	}
	if o.JobMinRuntime <= 0 {
		o.JobMinRuntime = DefaultJobMinRuntime
	}
	if o.StallWindow <= 0 {
		o.StallWindow = DefaultStallWindow
	}
	if o.StallArmAfter <= 0 {
		o.StallArmAfter = DefaultStallArmAfter
	}
	if o.Busy == (procs.BusyRule{}) {
		o.Busy = procs.DefaultBusyRule
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.GPU = kb.Annotated(o.GPU) // the GPU as every command describes it
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Policy == nil {
		o.Policy = NewPolicy()
	}
	if o.Reader == nil {
		facts := &filefacts.Store{}
		o.Reader = &pyenv.Reader{Disk: pyenv.RealDisk, Facts: facts, Kernels: &fatbin.Cache{Facts: facts}}
	}
	return &Monitor{o: o, log: o.Logger, clock: o.Clock, policy: o.Policy,
		hub: newHub(o.Logger), culprits: newCulprits(), requests: make(chan func(context.Context), 16),
		started: make(chan struct{}), stopped: make(chan struct{}),
		envs: newEnvSet(), machine: newMachineState(o.GPUHealth), procs: processPoll{jobs: findingSet{}}, jobs: newJobWatch(),
		memory: newMemory(o.Store, o.Logger), repairs: repairLog{dir: o.Journals}}
}

// Policy is the notification policy, for snoozing and pausing.
func (m *Monitor) Policy() *Policy { return m.policy }

// State returns a copy of the current state.
func (m *Monitor) State() monitor.State { return m.view.get() }

// Subscribe returns a channel that receives every event from now on, and a
// function that ends the subscription. A subscriber that falls more than
// 1024 events behind loses events (and the log says so) rather than
// stalling the engine. The channel is closed when Run returns; after
// that, Subscribe returns a closed channel.
func (m *Monitor) Subscribe() (<-chan monitor.Event, func()) { return m.hub.subscribe() }

// History is the newest remembered events, at most limit of them, newest
// first. It reads the history's log from its end (a window shows the
// last thousand events of a history of any length in the time they take).
func (m *Monitor) History(limit int) []monitor.Event { return m.memory.history(limit) }

// ErrStopped is returned for a request made after Run has returned.
var ErrStopped = errors.New("the engine has stopped")

// request queues f for the Run goroutine; once Run has returned it is
// refused, so a caller (a tray click) never waits on a loop that is gone.
func (m *Monitor) request(f func(context.Context)) error {
	select {
	case <-m.stopped:
		return ErrStopped
	default:
	}
	select {
	case m.requests <- f:
		return nil
	case <-m.stopped:
		return ErrStopped
	}
}

// Started is closed once the first full read is done and published: the
// state then holds every environment found.
func (m *Monitor) Started() <-chan struct{} { return m.started }

// Stopped is closed when Run has returned.
func (m *Monitor) Stopped() <-chan struct{} { return m.stopped }

// Add starts watching the environment at path (added by hand). The path
// may also be a project folder or an interpreter: it is resolved
// (envsearch.ResolveArg) to the environment that is watched; a project without
// an environment yet is an error that says how to create it.
func (m *Monitor) Add(path string) error {
	select {
	case <-m.stopped:
		return ErrStopped
	default:
	}
	// resolved here, on the caller's goroutine, with this process's home
	// and variables: the discovery options belong to the Run goroutine
	r, err := envsearch.ResolveArg(path, managers.Where{})
	if err != nil {
		return err
	}
	env := r.Env
	return m.request(func(ctx context.Context) {
		m.envs.forget(env, false)
		m.readEnv(ctx, env, viaAdded)
	})
}

// Forget stops watching the environment at path until it is added again.
func (m *Monitor) Forget(path string) error {
	return m.request(func(context.Context) {
		m.envs.forget(path, true)
		m.removeEnv(path, removedByHand)
	})
}

// Run reads everything once, then watches until ctx ends. It returns nil
// on cancellation; subscriptions are closed when it returns.
func (m *Monitor) Run(ctx context.Context) error {
	defer m.stop()
	defer m.closeJobs()
	w, watchErr := m.openWatcher()
	m.w = w
	w.onBurst = func(env string) { m.culprits.catch(ctx, m.o.Processes, env) }
	var watching sync.WaitGroup
	defer func() { w.close(); watching.Wait() }()

	if err := m.memory.load(); err != nil {
		m.storeUnreadable(storeWhat(err, "state"), err)
	}
	m.pollGPU(ctx, true)
	m.polled()
	if watchErr != nil {
		m.log.Warn("no file watcher; polling environments instead", "err", watchErr)
		msg := fmt.Sprintf("%v (on Linux, fs.inotify.max_user_instances is reached); environments are polled every %s instead", watchErr, m.o.Interval)
		if m.o.Rediscover > 0 && len(m.o.Paths) == 0 {
			msg += fmt.Sprintf(", and new ones are looked for every %s", m.o.Rediscover)
		}
		m.degrade("no-watcher", msg)
	}
	// The tickers start before the first read is published, so whoever
	// waits for Started can count on the next tick.
	m.tick = m.clock.NewTicker(m.o.Interval)
	defer m.tick.Stop()
	var rediscover <-chan time.Time
	if m.o.Rediscover > 0 && len(m.o.Paths) == 0 {
		t := m.clock.NewTicker(m.o.Rediscover)
		defer t.Stop()
		rediscover = t.C()
	}
	m.start(ctx)
	m.pollRepairs(true)

	watching.Add(1)
	go func() { defer watching.Done(); w.run(ctx) }()
	if m.o.RefreshKnowledge != nil {
		t := m.clock.NewTicker(KnowledgeEvery)
		watching.Add(1)
		go func() { defer watching.Done(); m.knowledgeLoop(ctx, t) }()
	}
	for {
		select {
		case <-ctx.Done():
			m.memory.save(&m.envs, m.clock.Now())
			return nil
		case env := <-w.settled:
			m.refreshEnv(ctx, env)
		case dir := <-w.candidates:
			m.candidate(ctx, dir)
		case why := <-w.overflow:
			m.degrade("overflow", why)
			m.rescan(ctx)
		case <-m.tick.C():
			m.pollGPU(ctx, false)
			m.pollGPUMemory(m.clock.Now())
			m.pollProcesses(ctx)
			m.pollJobEnds(m.clock.Now())
			m.pollUnwatched(ctx)
			m.pollRepairs(false)
			m.polled()
		case <-rediscover:
			m.rescan(ctx)
		case req := <-m.requests:
			req(ctx)
		}
	}
}

// openWatcher starts the file watcher (or one that watches nothing, and
// the error saying why, when the kernel refuses one).
func (m *Monitor) openWatcher() (*watcher, error) {
	start := m.newFS
	if start == nil {
		start = newFSWatcher
	}
	w, err := newWatcher(m.log, m.clock, m.o.Settle, start)
	if m.addWatch != nil && w.fs != nil {
		add := m.addWatch
		w.add = func(p string) error { return add(w.fs, p) }
	}
	return w, err
}

// stop ends every subscription and refuses requests from now on. The
// hub closes first, so that whoever sees Stopped closed and subscribes
// gets a closed channel.
func (m *Monitor) stop() {
	m.hub.close()
	m.stopOnce.Do(func() { close(m.stopped) })
}

// publish applies the policy, updates the visible state, remembers and
// sends the events.
func (m *Monitor) publish(events []monitor.Event) {
	now := m.clock.Now()
	for i := range events {
		if events[i].Time.IsZero() {
			events[i].Time = now
		}
	}
	m.policy.DecideAll(events)
	for _, e := range events {
		m.envs.noteTorch(e)
	}
	m.view.update(func(s *monitor.State) {
		s.Envs = m.envs.reports()
		s.Findings = m.machine.findings()
		s.TorchChanges = m.envs.torchChanges()
	})
	if len(events) == 0 {
		return
	}
	unsaved := m.memory.append(events)
	m.memory.save(&m.envs, now)
	m.hub.send(events)
	if unsaved != nil {
		m.storeUnreadable(storeWhat(unsaved, "history"), unsaved) // publishes: after these events
	}
}
