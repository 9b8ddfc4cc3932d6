package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// Options configures a Monitor. Zero values are sensible defaults.
type Options struct {
	// Paths are the environments to watch; empty means discover them
	// (Discover) and watch the discovery roots for new ones.
	Paths    []string
	Discover pyenv.DiscoverOptions
	GPU      gpu.Backend
	// Processes is the process side; nil leaves it out.
	Processes ProcessSource
	// Busy decides when a busy process off the GPU is JOB_ON_CPU.
	Busy   procs.BusyRule
	Health health.Options
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
	// Policy decides notifications; nil means NewPolicy().
	Policy *Policy
	// ProcRoot is /proc (tests may point it elsewhere).
	ProcRoot string
	// Redact hides secrets in command lines shown in events.
	Redact func([]string) []string
	Logger *slog.Logger
}

// State is everything the engine currently knows.
type State struct {
	GPU       gpu.State   `json:"gpu"`
	Envs      []EnvReport `json:"envs"`
	Processes []Process   `json:"processes"`
	// Findings are about the machine or the engine itself
	// (NO_GPU_DRIVER, WATCH_DEGRADED).
	Findings []health.Finding `json:"findings"`
	// Started is false until the first full read is done.
	Started bool `json:"started"`
}

// Check is the state in `check`'s shape, for views that show both.
func (s State) Check() CheckResult {
	return CheckResult{GPU: s.GPU, Envs: s.Envs, Findings: s.Findings}
}

// Monitor is the live engine. Run drives it; everything else is safe to
// call from any goroutine.
type Monitor struct {
	o      Options
	log    *slog.Logger
	policy *Policy

	mu     sync.RWMutex
	state  State
	forget map[string]bool // environments removed by hand

	subMu sync.Mutex
	subs  map[int]chan Event
	next  int
	// stopped is closed when Run returns: requests are then refused
	// rather than queued for a loop that is gone, and a late Subscribe
	// gets a closed channel.
	stopped  chan struct{}
	stopOnce sync.Once

	// Owned by the Run goroutine.
	envs     map[string]*envEntry
	w        *watcher
	lastGPU  gpu.State
	jobs     map[string]health.Finding // JOB_ON_CPU findings by key
	waiting  map[string]time.Time      // since when an install in progress was seen, by env
	machine  map[string]health.Finding // machine findings by key
	memory   store.State
	procTick int
	idle     bool
	tracker  *procs.BusyTracker
	tick     *time.Ticker // the polling ticker, reset by Reconfigure
	// testWatcher, when set, replaces the watcher Run would make; newFS,
	// when set, replaces the kernel's file watcher.
	testWatcher *watcher
	newFS       func() (*fsnotify.Watcher, error)
	// dropPending says the discovery roots changed and the environments
	// they no longer cover are still to be dropped (dropUncovered).
	dropPending bool
	// removedRoots are the roots (and a former home) the settings dropped
	// since the last complete discovery: their environments go even when a
	// search is cut short (dropUncovered).
	removedRoots []string
	// cutWarned says the cut-short search was already told of, once.
	cutWarned bool
	// requests carries work for the Run goroutine (Add, Forget).
	requests chan func(context.Context)
}

type envEntry struct {
	report   EnvReport
	via      string
	findings map[string]health.Finding
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
	if o.Busy == (procs.BusyRule{}) {
		o.Busy = procs.DefaultBusyRule
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.Redact == nil {
		o.Redact = func(a []string) []string { return a }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := o.Policy
	if p == nil {
		p = NewPolicy()
	}
	return &Monitor{o: o, log: o.Logger, policy: p, subs: map[int]chan Event{}, requests: make(chan func(context.Context), 16), stopped: make(chan struct{}),
		envs: map[string]*envEntry{}, jobs: map[string]health.Finding{}, waiting: map[string]time.Time{}, machine: map[string]health.Finding{}}
}

// Policy is the notification policy, for snoozing and pausing.
func (m *Monitor) Policy() *Policy { return m.policy }

// State returns a copy of the current state.
func (m *Monitor) State() State {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.state.Clone()
}

// Clone copies the state's lists, so the copy can be kept while the
// original is replaced.
func (s State) Clone() State {
	s.Envs = slices.Clone(s.Envs)
	s.Processes = slices.Clone(s.Processes)
	s.Findings = slices.Clone(s.Findings)
	return s
}

// Subscribe returns a channel that receives every event from now on, and a
// function that ends the subscription. A subscriber that falls more than
// 1024 events behind loses events (and the log says so) rather than
// stalling the engine. The channel is closed when Run returns; after
// that, Subscribe returns a closed channel.
func (m *Monitor) Subscribe() (<-chan Event, func()) {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	ch := make(chan Event, 1024)
	select {
	case <-m.stopped: // closed under subMu, by closeSubs
		close(ch)
		return ch, func() {}
	default:
	}
	id := m.next
	m.next++
	m.subs[id] = ch
	return ch, func() {
		m.subMu.Lock()
		defer m.subMu.Unlock()
		if c, ok := m.subs[id]; ok {
			delete(m.subs, id)
			close(c)
		}
	}
}

// History is the remembered events, newest first.
func (m *Monitor) History() []Event {
	if m.o.Store == nil {
		return nil
	}
	evs, err := store.History[Event](m.o.Store)
	if err != nil {
		m.log.Warn("reading event history", "err", err)
	}
	slices.Reverse(evs)
	return evs
}

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

// Stopped is closed when Run has returned.
func (m *Monitor) Stopped() <-chan struct{} { return m.stopped }

// Add starts watching the environment at path (added by hand).
func (m *Monitor) Add(path string) error {
	return m.request(func(ctx context.Context) {
		m.forgotten(path, false)
		m.readEnv(ctx, path, viaAdded)
	})
}

// Forget stops watching the environment at path until it is added again.
func (m *Monitor) Forget(path string) error {
	return m.request(func(ctx context.Context) {
		m.forgotten(path, true)
		if e := m.envs[path]; e != nil {
			delete(m.envs, path)
			m.w.unwatchEnv(e.report.Env)
			delete(m.memory.Envs, path)
			m.publish(m.diffFindings(path, e, nil, time.Now()))
		}
	})
}

// forgotten records (or clears) that path was removed by hand, so that
// discovery does not bring it back.
func (m *Monitor) forgotten(path string, yes bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.forget == nil {
		m.forget = map[string]bool{}
	}
	if yes {
		m.forget[path] = true
	} else {
		delete(m.forget, path)
	}
}

func (m *Monitor) isForgotten(path string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.forget[path]
}

// Run reads everything once, then watches until ctx ends. It returns nil
// on cancellation; subscriptions are closed when it returns.
func (m *Monitor) Run(ctx context.Context) error {
	defer m.closeSubs()
	w := m.testWatcher
	var watchErr error
	if w == nil {
		start := m.newFS
		if start == nil {
			start = newFSWatcher
		}
		w, watchErr = newWatcher(m.log, m.o.Settle, start)
	}
	m.w = w
	defer w.close()
	w.onBurst = func(env string) { m.setCulprit(env) }

	m.loadMemory()
	m.pollGPU(ctx, true)
	if watchErr != nil {
		m.log.Warn("no file watcher; polling environments instead", "err", watchErr)
		msg := fmt.Sprintf("%v (on Linux, fs.inotify.max_user_instances is reached); environments are polled every %s instead", watchErr, m.o.Interval)
		if m.o.Rediscover > 0 && len(m.o.Paths) == 0 {
			msg += fmt.Sprintf(", and new ones are looked for every %s", m.o.Rediscover)
		}
		m.degrade("no-watcher", msg)
	}
	m.start(ctx)

	go w.run(ctx)
	tick := time.NewTicker(m.o.Interval)
	defer tick.Stop()
	m.tick = tick
	var rediscover <-chan time.Time
	if m.o.Rediscover > 0 && len(m.o.Paths) == 0 {
		t := time.NewTicker(m.o.Rediscover)
		defer t.Stop()
		rediscover = t.C
	}
	for {
		select {
		case <-ctx.Done():
			m.saveMemory()
			return nil
		case env := <-w.settled:
			m.refreshEnv(ctx, env)
		case dir := <-w.candidates:
			m.candidate(ctx, dir)
		case why := <-w.overflow:
			m.degrade("overflow", why)
			m.rescan(ctx)
		case <-tick.C:
			m.pollGPU(ctx, false)
			m.pollProcesses(ctx)
			m.pollUnwatched(ctx)
		case <-rediscover:
			m.rescan(ctx)
		case req := <-m.requests:
			req(ctx)
		}
	}
}

// start discovers and reads every environment, compares it with what was
// remembered, and sets up the watches.
func (m *Monitor) start(ctx context.Context) {
	found, _ := m.discover(ctx)
	now := time.Now()
	var events []Event
	for _, f := range found {
		rep := InspectOne(ctx, f, m.lastGPU, m.o.Health)
		e := &envEntry{report: rep, via: f.Via, findings: map[string]health.Finding{}}
		m.envs[f.Path] = e
		rec, known := m.memory.Envs[f.Path]
		if !known {
			events = append(events, Event{Time: now, Kind: KindEnvAdded, Env: f.Path, After: rep.Torch(),
				Message: fmt.Sprintf("Watching %s (torch %s).", f.Path, describeTorch(rep.Torch()))})
		} else if ev := torchEvent(f.Path, rec.Torch, rep.Torch()); ev != nil {
			ev.Time, ev.Offline = now, true
			ev.Message = fmt.Sprintf("%s (It was %s when last seen on %s; the change happened while GPU Canary was not running.)",
				ev.Message, describeTorch(rec.Torch), rec.Seen.Local().Format("2006-01-02"))
			if rep.Torch() != nil && rep.Torch().Installer != "" {
				ev.Culprit = &Culprit{Installer: rep.Torch().Installer}
			}
			events = append(events, *ev)
		}
		for _, k := range rec.Findings {
			// Already raised (and told) in an earlier run: carried, not raised again.
			e.findings[k] = health.Finding{}
		}
		events = append(events, m.diffFindings(f.Path, e, rep.Findings, now)...)
		m.w.watchEnv(rep.Env)
	}
	for path, rec := range m.memory.Envs {
		if _, ok := m.envs[path]; ok {
			continue
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			events = append(events, Event{Time: now, Kind: KindEnvRemoved, Env: path, Before: rec.Torch, Offline: true,
				Message: fmt.Sprintf("%s was deleted while GPU Canary was not running (torch %s when last seen on %s).", path, describeTorch(rec.Torch), rec.Seen.Local().Format("2006-01-02"))})
			delete(m.memory.Envs, path)
		}
	}
	m.watchRoots()
	m.mu.Lock()
	m.state.Started = true
	m.mu.Unlock()
	m.publish(events)
}

// discover lists the environments to watch, and says whether it looked
// everywhere (pyenv.DiscoverAll).
func (m *Monitor) discover(ctx context.Context) ([]pyenv.Found, bool) {
	o := m.o.Discover
	o.Paths = m.o.Paths
	found, complete := pyenv.DiscoverAll(ctx, o)
	return slices.DeleteFunc(found, func(f pyenv.Found) bool { return m.isForgotten(f.Path) }), complete
}

// watchRoots watches the discovery roots and each environment's parent,
// where new environments appear and old ones are deleted.
func (m *Monitor) watchRoots() {
	roots := map[string]bool{}
	if len(m.o.Paths) == 0 {
		for _, r := range m.o.Discover.Roots {
			roots[r] = true
		}
		if m.o.Discover.Home != "" {
			roots[m.o.Discover.Home] = true
		}
	}
	for p := range m.envs {
		roots[parentDir(p)] = true
	}
	for r := range roots {
		m.w.watchRoot(r)
	}
}

// viaAdded marks an environment added by hand (Add): settings changes
// never drop it.
const viaAdded = "added"

// refreshEnv reads one environment again after its files settled.
func (m *Monitor) refreshEnv(ctx context.Context, path string) { m.readEnv(ctx, path, "watch") }

// readEnv reads one environment; via says how it was found when it is new.
func (m *Monitor) readEnv(ctx context.Context, path, via string) {
	now := time.Now()
	e := m.envs[path]
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if e != nil {
			m.removeEnv(path, e, now)
		}
		return
	}
	if !pyenv.IsEnv(path) {
		return
	}
	if e != nil && e.via != "" {
		via = e.via
	}
	rep := InspectOne(ctx, pyenv.Found{Path: path, Via: via}, m.lastGPU, m.o.Health)
	if rep.Env != nil && installInProgress(rep.Env) {
		// Wait for the installer to finish, but not forever: a stash left
		// behind by a crashed pip is a state to report.
		since, waiting := m.waiting[path]
		if !waiting {
			since = now
			m.waiting[path] = now
		}
		if now.Sub(since) < m.o.MaxInstallWait {
			m.w.recheck(path, m.o.Settle)
			return
		}
	}
	delete(m.waiting, path)
	var events []Event
	if e == nil {
		e = &envEntry{via: via, findings: map[string]health.Finding{}}
		m.envs[path] = e
		events = append(events, Event{Time: now, Kind: KindEnvAdded, Env: path, After: rep.Torch(),
			Message: fmt.Sprintf("New environment %s (torch %s).", path, describeTorch(rep.Torch()))})
		m.w.watchRoot(parentDir(path))
	} else if ev := torchEvent(path, e.report.Torch(), rep.Torch()); ev != nil {
		ev.Time = now
		c := m.takeCulprit(path)
		if t := rep.Torch(); t != nil && t.Installer != "" {
			if c == nil {
				c = &Culprit{}
			}
			c.Installer = t.Installer
		}
		blame(ev, c)
		if ev.Kind == KindCUDAWheelReplaced || ev.Kind == KindTorchChanged {
			for _, f := range rep.Findings {
				if f.Fix != "" && f.Severity == health.SeverityError {
					ev.Fix = f.Fix
					break
				}
			}
		}
		events = append(events, *ev)
	}
	e.report = rep
	m.w.watchEnv(rep.Env)
	events = append(events, m.diffFindings(path, e, rep.Findings, now)...)
	m.publish(events)
}

// installInProgress is true while pip's stash or a torch folder without
// its metadata shows an install half done.
func installInProgress(env *pyenv.Env) bool {
	in := func(ps []pyenv.Problem) bool {
		for _, p := range ps {
			if p.Kind == pyenv.ProblemPipStash || p.Kind == pyenv.ProblemMissingDistInfo {
				return true
			}
		}
		return false
	}
	if in(env.Problems) {
		return true
	}
	if t := env.Torch(); t != nil && in(t.Problems) {
		return true
	}
	return false
}

func (m *Monitor) removeEnv(path string, e *envEntry, now time.Time) {
	delete(m.envs, path)
	m.w.unwatchEnv(e.report.Env)
	events := []Event{{Time: now, Kind: KindEnvRemoved, Env: path, Before: e.report.Torch(),
		Message: fmt.Sprintf("%s was deleted (it had torch %s).", path, describeTorch(e.report.Torch()))}}
	events = append(events, m.diffFindings(path, e, nil, now)...)
	m.publish(events)
}

// candidate checks a new folder in a watched root: it may be a new
// environment (pyvenv.cfg or conda-meta appearing).
func (m *Monitor) candidate(ctx context.Context, dir string) {
	if m.isForgotten(dir) {
		return
	}
	if _, known := m.envs[dir]; known {
		m.refreshEnv(ctx, dir)
		return
	}
	if pyenv.IsEnv(dir) {
		m.refreshEnv(ctx, dir)
	}
}

// rescan rediscovers and rereads everything (after an overflow, or
// periodically); changes come out as ordinary events.
func (m *Monitor) rescan(ctx context.Context) {
	found, complete := m.discover(ctx)
	m.dropUncovered(ctx, found, complete)
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.Path] = true
		if e := m.envs[f.Path]; e == nil {
			m.candidate(ctx, f.Path)
		} else {
			m.refreshEnv(ctx, f.Path)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(m.envs)) {
		if !seen[p] {
			m.refreshEnv(ctx, p)
		}
	}
	m.watchRoots()
}

// pollUnwatched rereads environments that could not be watched (an
// inotify limit) when their site-packages changed.
func (m *Monitor) pollUnwatched(ctx context.Context) {
	for _, p := range m.w.changedUnwatched() {
		m.refreshEnv(ctx, p)
	}
	if n := m.w.unwatchedCount(); n > 0 && m.w.fs != nil {
		m.degrade("inotify-limit", fmt.Sprintf("%d environment(s) could not be watched (the inotify watch limit was reached, see fs.inotify.max_user_watches) and are polled every %s instead", n, m.o.Interval))
	}
}

// degrade raises WATCH_DEGRADED once per reason.
func (m *Monitor) degrade(reason, msg string) {
	f := health.Finding{Code: health.CodeWatchDegraded, Severity: health.SeverityWarning, Env: "watch:" + reason,
		Message: "File watching is degraded: " + msg + "."}
	if _, ok := m.machine[f.Key()]; ok {
		return
	}
	m.machine[f.Key()] = f
	m.publish([]Event{{Time: time.Now(), Kind: KindFindingRaised, Finding: &f, Message: f.Message}})
}

// diffFindings records e's new findings and returns FINDING_RAISED and
// FINDING_CLEARED events for what changed.
func (m *Monitor) diffFindings(env string, e *envEntry, now []health.Finding, at time.Time) []Event {
	var events []Event
	cur := map[string]health.Finding{}
	for _, f := range now {
		cur[f.Key()] = f
		if _, had := e.findings[f.Key()]; !had {
			f := f
			events = append(events, Event{Time: at, Kind: KindFindingRaised, Env: env, Finding: &f, Message: f.Message, Fix: f.Fix})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.findings)) {
		if _, still := cur[k]; still {
			continue
		}
		f := e.findings[k]
		if f.Code == "" {
			f = health.Finding{Code: codeOfKey(k), Env: env}
		}
		events = append(events, Event{Time: at, Kind: KindFindingCleared, Env: env, Finding: &f,
			Message: fmt.Sprintf("Resolved in %s: %s no longer applies.", env, f.Code)})
	}
	e.findings = cur
	return events
}

func codeOfKey(k string) string {
	code, _, _ := strings.Cut(k, "|")
	return code
}

// pollGPU reads the GPU and reports a driver appearing or vanishing, or a
// device lost; findings that depend on the GPU are evaluated again.
func (m *Monitor) pollGPU(ctx context.Context, first bool) {
	if m.o.GPU == nil {
		return
	}
	g := m.o.GPU.Snapshot(ctx)
	annotate(&g)
	prev := m.lastGPU
	m.lastGPU = g
	m.mu.Lock()
	m.state.GPU = g
	m.mu.Unlock()
	if first {
		m.machineFindings(health.CheckGPU(g), time.Now())
		return
	}
	if msg := gpuChange(prev, g); msg != "" {
		now := time.Now()
		events := []Event{{Time: now, Kind: KindGPUStateChanged, Message: msg}}
		m.publish(events)
		m.machineFindings(health.CheckGPU(g), now)
		for _, p := range slices.Sorted(maps.Keys(m.envs)) {
			e := m.envs[p]
			if e.report.Env == nil || len(e.report.Env.Packages) == 0 && e.report.Verdict == VerdictError {
				continue
			}
			fs := health.CheckEnv(e.report.Env, g, WithFixCommands(m.o.Health))
			sortFindings(fs)
			e.report.Findings = fs
			e.report.Verdict = verdict(e.report.Env, fs)
			m.publish(m.diffFindings(p, e, fs, now))
		}
	}
}

// machineFindings replaces the GPU findings (NO_GPU_DRIVER) with fs.
func (m *Monitor) machineFindings(fs []health.Finding, now time.Time) {
	var events []Event
	cur := map[string]bool{}
	for _, f := range fs {
		cur[f.Key()] = true
		if _, ok := m.machine[f.Key()]; !ok {
			m.machine[f.Key()] = f
			f := f
			events = append(events, Event{Time: now, Kind: KindFindingRaised, Finding: &f, Message: f.Message})
		}
	}
	for k, f := range m.machine {
		if f.Code == health.CodeNoGPUDriver && !cur[k] {
			delete(m.machine, k)
			f := f
			events = append(events, Event{Time: now, Kind: KindFindingCleared, Finding: &f, Message: "An NVIDIA driver answers again."})
		}
	}
	m.publish(events)
}

// gpuChange says what changed between two GPU states that a person should
// know, or "".
func gpuChange(a, b gpu.State) string {
	switch {
	case a.HasDriver() && !b.HasDriver():
		msg := "The NVIDIA driver no longer answers"
		if b.Error != "" {
			msg += ": " + b.Error
		}
		return msg + "."
	case !a.HasDriver() && b.HasDriver():
		return fmt.Sprintf("An NVIDIA driver appeared: %s (CUDA %s), %d GPU(s).", b.Driver, b.CUDADriver, len(b.Devices))
	case a.Driver != b.Driver || a.CUDADriver != b.CUDADriver:
		return fmt.Sprintf("The NVIDIA driver changed: %s (CUDA %s) → %s (CUDA %s).", a.Driver, a.CUDADriver, b.Driver, b.CUDADriver)
	}
	had := map[string]string{}
	for _, d := range a.Devices {
		had[deviceID(d)] = d.Name
	}
	for _, d := range b.Devices {
		delete(had, deviceID(d))
	}
	for _, name := range had {
		return fmt.Sprintf("GPU lost: %s no longer answers.", name)
	}
	if len(b.Devices) > len(a.Devices) {
		return fmt.Sprintf("%d GPU(s) now answer (were %d).", len(b.Devices), len(a.Devices))
	}
	return ""
}

func deviceID(d gpu.Device) string {
	if d.UUID != "" {
		return d.UUID
	}
	return fmt.Sprint(d.Index, d.Name)
}

// publish applies the policy, updates the visible state, remembers and
// sends the events.
func (m *Monitor) publish(events []Event) {
	told := map[string]bool{}
	for i := range events {
		e := &events[i]
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		m.policy.Decide(e, told[e.Env])
		if e.Notify && (e.Kind == KindCUDAWheelReplaced || e.Kind == KindTorchChanged || e.Kind == KindTorchRemoved) {
			told[e.Env] = true
		}
	}
	m.updateState()
	if len(events) == 0 {
		return
	}
	if m.o.Store != nil {
		anys := make([]any, len(events))
		for i := range events {
			anys[i] = events[i]
		}
		if err := m.o.Store.Append(anys...); err != nil {
			m.log.Warn("saving event history", "err", err)
		}
		m.saveMemory()
	}
	m.subMu.Lock()
	defer m.subMu.Unlock()
	for _, e := range events {
		m.log.Debug("event", "kind", e.Kind, "env", e.Env, "notify", e.Notify)
		for _, ch := range m.subs {
			select {
			case ch <- e:
			default:
				m.log.Warn("a subscriber is too slow; an event was dropped for it", "kind", e.Kind)
			}
		}
	}
}

// updateState rebuilds the visible state from the loop's own data.
func (m *Monitor) updateState() {
	envs := make([]EnvReport, 0, len(m.envs))
	for _, p := range slices.Sorted(maps.Keys(m.envs)) {
		envs = append(envs, m.envs[p].report)
	}
	findings := make([]health.Finding, 0, len(m.machine))
	for _, k := range slices.Sorted(maps.Keys(m.machine)) {
		findings = append(findings, m.machine[k])
	}
	m.mu.Lock()
	m.state.Envs = envs
	m.state.Findings = findings
	m.mu.Unlock()
}

func (m *Monitor) closeSubs() {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	m.stopOnce.Do(func() { close(m.stopped) })
	for id, ch := range m.subs {
		close(ch)
		delete(m.subs, id)
	}
}

// loadMemory reads what the last run saved.
func (m *Monitor) loadMemory() {
	m.memory = store.State{Envs: map[string]store.EnvRecord{}}
	if m.o.Store == nil {
		return
	}
	st, warn := m.o.Store.LoadState()
	if warn != nil {
		m.log.Warn("reading saved state", "err", warn)
	}
	m.memory = st
}

// saveMemory writes the last known state of each environment.
func (m *Monitor) saveMemory() {
	if m.o.Store == nil {
		return
	}
	now := time.Now()
	for p, e := range m.envs {
		keys := slices.Sorted(maps.Keys(e.findings))
		m.memory.Envs[p] = store.EnvRecord{Torch: e.report.Torch(), Findings: keys, Seen: now}
	}
	m.memory.Saved = now
	if err := m.o.Store.SaveState(m.memory); err != nil {
		m.log.Warn("saving state", "err", err)
	}
}

// setCulprit looks for the installer of env at the first event of a burst.
// It runs on the watcher's goroutine, while the installer still runs.
func (m *Monitor) setCulprit(env string) {
	c := findInstaller(m.o.ProcRoot, env, m.o.Redact)
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if c != nil {
		m.w.culprits[env] = c
	}
}

func (m *Monitor) takeCulprit(env string) *Culprit {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	c := m.w.culprits[env]
	delete(m.w.culprits, env)
	return c
}
