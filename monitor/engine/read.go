package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/jobend"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// start discovers and reads every environment, compares it with what was
// remembered, and sets up the watches. It publishes the first full read,
// then marks the engine started.
func (m *Monitor) start(ctx context.Context) {
	began := m.clock.Now()
	found, _ := m.discover(ctx)
	now := m.clock.Now()
	var events []monitor.Event
	// The history is read only if a remembered finding needs it.
	readPast := sync.OnceValue(func() []monitor.Event { return m.memory.history(store.HistoryLimit) })
	inspect.InspectEach(ctx, found, m.reader(), func(i int, rep monitor.EnvReport) bool {
		if ctx.Err() != nil {
			// Stopped while reading: what is not read is not known, so it
			// is neither a finding nor a record that replaces the one
			// remembered (its torch would be saved as unknown, and a change
			// made while GPU Canary was not running never told).
			return false
		}
		f := found[i]
		if rep.OutOfFiles {
			// Nothing about it is known yet: it is read again, and
			// added, once files can be opened.
			m.outOfFiles(f.Path)
			return true
		}
		e := m.envs.add(f.Path, f.Via)
		e.report = rep
		rec, known := m.memory.env(f.Path)
		e.torch = monitor.TorchChange{Changed: rec.TorchChanged, Replaced: rec.TorchReplaced}
		if !known {
			events = append(events, monitor.Event{Time: now, Kind: monitor.KindEnvAdded, Env: f.Path, After: rep.Torch(),
				Message: fmt.Sprintf("Watching %s (%s).", f.Path, torchNote(rep.Torch()))})
		} else if ev := torchEvent(f.Path, rec.Torch, rep.Torch()); ev != nil {
			ev.Time, ev.Offline = now, true
			ev.Message = fmt.Sprintf("%s (It was %s when last seen on %s; the change happened while GPU Canary was not running.)",
				ev.Message, describeTorch(rec.Torch), rec.Seen.Local().Format("2006-01-02"))
			if rep.Torch() != nil && rep.Torch().Installer != "" {
				ev.Culprit = &monitor.Culprit{Installer: rep.Torch().Installer}
			}
			events = append(events, *ev)
		}
		for _, k := range rec.Findings {
			// Already raised (and told) in an earlier run: carried, and
			// raised again only if its verdict changed meanwhile.
			e.findings[k] = carried(k, f.Path, m.memory.told(rec, f.Path, k, readPast))
		}
		events = append(events, envFindingEvents(f.Path, now, e.findings.update(rep.Findings))...)
		m.w.watchEnv(rep.Env)
		return true
	})
	if ctx.Err() == nil {
		events = append(events, m.memory.deletedWhileStopped(&m.envs, now)...)
	}
	m.flushFacts()
	m.watchRoots()
	m.readDone(began)
	// The processes too, before the first read is published: a job
	// running now is held for its end (JOB_ENDED) from the start, and the
	// first state lists it.
	m.pollProcesses(ctx)
	m.publish(events)
	m.view.update(func(s *monitor.State) {
		s.Started = true
		s.JobsEnded = map[jobend.How]uint64{jobend.Finished: 0, jobend.Crashed: 0, jobend.Unknown: 0}
	})
	close(m.started)
}

// discover lists the environments to watch, and says whether it looked
// everywhere (envsearch.Search); the State says what cut it short. A search
// cut short still reads the environments remembered from earlier runs.
func (m *Monitor) discover(ctx context.Context) ([]envsearch.Found, bool) {
	o := m.o.Discover
	o.Paths = m.o.Paths
	o.Remembered = m.memory.paths()
	var d envsearch.Discovery
	if len(o.Paths) > 0 && len(m.o.Given) > 0 {
		d = envsearch.Given(m.o.Given) // resolved by the caller: not again
	} else {
		d = envsearch.Search(ctx, o)
	}
	m.view.update(func(s *monitor.State) { s.DiscoveryComplete, s.SearchStopped = d.Complete, d.Stopped })
	if len(o.Paths) > 0 {
		m.named = map[string]bool{}
		for _, f := range d.Found {
			m.named[f.Path] = true
		}
	}
	// A kernel whose interpreter is gone (Found.Missing) has no
	// environment to watch: `check` reports it, the engine does not.
	return slices.DeleteFunc(d.Found, func(f envsearch.Found) bool { return f.Missing != "" || m.envs.isForgotten(f.Path) }), d.Complete
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
	for _, p := range m.envs.paths() {
		roots[filepath.Dir(p)] = true
	}
	for r := range roots {
		m.w.watchRoot(r)
	}
}

// refreshEnv reads one environment again after its files settled.
func (m *Monitor) refreshEnv(ctx context.Context, path string) { m.readEnvs(ctx, viaWatch, path) }

// readEnv reads one environment; via says how it was found when it is new.
func (m *Monitor) readEnv(ctx context.Context, path, via string) { m.readEnvs(ctx, via, path) }

// viaWatch is how an environment found by a watch or a rescan was found.
const viaWatch = "watch"

// reader reads one environment for inspect.InspectEach against the GPU
// and options as they are now (read here, on the Run goroutine, not by
// the readers).
func (m *Monitor) reader() func(context.Context, envsearch.Found) monitor.EnvReport {
	read := m.inspect
	if read == nil {
		rd := m.o.Reader
		read = func(ctx context.Context, f envsearch.Found, g gpu.State, o health.Options) monitor.EnvReport {
			return inspect.InspectOne(ctx, rd, f, g, o)
		}
	}
	g, o, guards := m.machine.gpu, m.o.Health, m.o.Guards
	return func(ctx context.Context, f envsearch.Found) monitor.EnvReport {
		return withGuard(guards, read(ctx, f, g, o))
	}
}

// readEnvs reads the environments at paths again (via says how a new one
// was found): one that is gone is removed, a folder that is not (or no
// longer) an environment is left, the others are read concurrently
// (inspect.InspectEach, so one whose file system hangs holds only its own
// read, until its deadline) and what each read found is applied and
// published in paths' order.
func (m *Monitor) readEnvs(ctx context.Context, via string, paths ...string) {
	now := m.clock.Now()
	found := make([]envsearch.Found, len(paths))
	gone := make([]bool, len(paths))
	skip := map[string]bool{} // not to read: gone, or not an environment
	for i, path := range paths {
		found[i] = envsearch.Found{Path: path, Via: via}
		if e := m.envs.get(path); e != nil && e.via != "" {
			found[i].Via = e.via
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			gone[i], skip[path] = true, true
		} else if !pyenv.IsEnv(path) {
			skip[path] = true
		}
	}
	readOne := m.reader()
	inspect.InspectEach(ctx, found, func(ctx context.Context, f envsearch.Found) monitor.EnvReport {
		if skip[f.Path] {
			return monitor.EnvReport{}
		}
		return readOne(ctx, f)
	}, func(i int, rep monitor.EnvReport) bool {
		switch {
		case gone[i]:
			m.removeEnv(paths[i], removedDeleted)
		case skip[paths[i]]:
		case ctx.Err() != nil:
			return false // stopped while reading: nothing was learned (see start)
		default:
			m.applyRead(found[i], now, rep)
		}
		return true
	})
	m.flushFacts()
}

// flushFacts writes what a pass of reads learned of files (the reader's
// fact stores) for the next pass and the next process; a failed write
// costs only a read next time.
func (m *Monitor) flushFacts() {
	if rd := m.o.Reader; rd.Facts != nil {
		if err := rd.Facts.Flush(); err != nil {
			m.log.Debug("file facts not written", "err", err)
		}
	}
	if rd := m.o.Reader; rd.Kernels != nil {
		if err := rd.Kernels.Flush(); err != nil {
			m.log.Debug("kernel cache not written", "err", err)
		}
	}
}

// applyRead takes in what a read of the environment f found: a new
// environment, a torch that changed, findings raised and cleared. A read
// during an install is put off until the installer is done.
func (m *Monitor) applyRead(f envsearch.Found, now time.Time, rep monitor.EnvReport) {
	path, e := f.Path, m.envs.get(f.Path)
	if rep.OutOfFiles {
		m.outOfFiles(path)
		return
	}
	if rep.Env != nil && installInProgress(rep.Env) {
		// Wait for the installer to finish, but not forever: a stash left
		// behind by a crashed pip is a state to report.
		if now.Sub(m.envs.installSeen(path, now)) < m.o.MaxInstallWait {
			m.w.recheck(path, m.o.Settle)
			return
		}
	}
	m.envs.installDone(path)
	var events []monitor.Event
	if e == nil {
		e = m.envs.add(path, f.Via)
		events = append(events, monitor.Event{Time: now, Kind: monitor.KindEnvAdded, Env: path, After: rep.Torch(),
			Message: fmt.Sprintf("New environment %s (%s).", path, torchNote(rep.Torch()))})
		m.w.watchRoot(filepath.Dir(path))
	} else if ev := torchEvent(path, e.report.Torch(), rep.Torch()); ev != nil {
		ev.Time = now
		c := m.culprits.take(path)
		if t := rep.Torch(); t != nil && t.Installer != "" {
			if c == nil {
				c = &monitor.Culprit{}
			}
			c.Installer = t.Installer
		}
		blame(ev, c)
		if ev.Kind == monitor.KindCUDAWheelReplaced || ev.Kind == monitor.KindTorchChanged {
			for _, f := range rep.Findings {
				if f.Fix != "" && f.Severity == finding.SeverityError {
					ev.Fix = f.Fix
					break
				}
			}
		}
		events = append(events, *ev)
	}
	if ev := guardEvent(path, now, e.report, rep); ev != nil {
		events = append(events, *ev)
	}
	e.report = rep
	m.w.watchEnv(rep.Env)
	events = append(events, envFindingEvents(path, now, e.findings.update(rep.Findings))...)
	m.publish(events)
}

// outOfFiles puts off a read of the environment at path that ran out
// of file descriptors: what it found is about this process, not the
// environment, so the last good reading stands (a new environment is
// not added yet) and it is read again after the settle time.
func (m *Monitor) outOfFiles(path string) {
	m.log.Warn("no file descriptor left while reading an environment; keeping the last reading and reading it again", "env", path)
	m.w.recheck(path, m.o.Settle)
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

// candidate checks a new folder in a watched root: it may be a new
// environment (pyvenv.cfg or conda-meta appearing).
func (m *Monitor) candidate(ctx context.Context, dir string) {
	if m.isCandidate(dir) {
		m.refreshEnv(ctx, dir)
	}
}

// isCandidate is true for a folder to read: one watched, or a new
// environment not forgotten by hand. With environments named
// (Options.Paths: `watch PATH`), a new one is read only if it is one of
// them (deleted and created again): their folders are watched to see
// that, and an environment someone else creates beside a named one is
// not watched (in a shared folder, anyone could add series to the
// agent's metrics).
func (m *Monitor) isCandidate(dir string) bool {
	if m.envs.isForgotten(dir) {
		return false
	}
	if m.envs.get(dir) != nil {
		return true
	}
	if len(m.o.Paths) > 0 && !m.named[dir] {
		return false
	}
	return pyenv.IsEnv(dir)
}

// rescan rediscovers and rereads everything (after an overflow, or
// periodically), concurrently (readEnvs); changes come out as ordinary
// events.
func (m *Monitor) rescan(ctx context.Context) {
	defer m.readDone(m.clock.Now())
	found, complete := m.discover(ctx)
	m.dropUncovered(ctx, found, complete)
	seen := map[string]bool{}
	var paths []string
	for _, f := range found {
		seen[f.Path] = true
		if m.isCandidate(f.Path) {
			paths = append(paths, f.Path)
		}
	}
	for _, p := range m.envs.paths() {
		if !seen[p] {
			paths = append(paths, p)
		}
	}
	m.readEnvs(ctx, viaWatch, paths...)
	m.watchRoots()
}

// readDone records that a full read of every environment, begun at
// began, has ended: how long reads take is the engine's own health.
func (m *Monitor) readDone(began time.Time) {
	now := m.clock.Now()
	m.view.update(func(s *monitor.State) { s.LastRead, s.LastReadDuration = now, now.Sub(began) })
}

// polled records the end of a poll of the GPU and processes: a Polled
// that stops moving says the loop is stuck (a hung driver call).
func (m *Monitor) polled() {
	now := m.clock.Now()
	m.view.update(func(s *monitor.State) { s.Polled = now })
}
