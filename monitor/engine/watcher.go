package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// watcher turns file events into "this environment settled" and "this
// folder may be a new environment". Per environment it watches at most
// site-packages and the environment's own folder (not recursively); the
// folders environments live in are watched once for all of them.
type watcher struct {
	fs  *fsnotify.Watcher
	log *slog.Logger
	// add watches a path; tests replace it to simulate an inotify limit.
	add func(string) error
	deb *debouncer

	mu      sync.Mutex
	sites   map[string]string // site-packages -> env
	roots   map[string]string // env folder -> env
	parents map[string]bool   // folders where environments appear and vanish
	polled  map[string]polled

	settled    chan string
	candidates chan string
	overflow   chan string
	done       chan struct{}
	closeOnce  sync.Once
	// onBurst is called (without locks held) at the first event of a burst.
	onBurst func(env string)
}

// candidatePrefix marks debouncer keys that are candidate folders.
const candidatePrefix = "\x00candidate:"

// errNoWatcher is what every watch fails with when no file watcher could
// be started: the environments are then polled.
var errNoWatcher = errors.New("no file watcher")

// newFSWatcher starts the kernel's file watcher (inotify on Linux).
func newFSWatcher() (*fsnotify.Watcher, error) { return fsnotify.NewBufferedWatcher(4096) }

// newWatcher starts a watcher with start (newFSWatcher, or a test's). When
// the kernel refuses one (on Linux, fs.inotify.max_user_instances is
// reached: every editor and file manager holds some), it returns a
// watcher that watches nothing, so every environment is polled instead,
// and the error saying why.
func newWatcher(log *slog.Logger, clock Clock, settle time.Duration, start func() (*fsnotify.Watcher, error)) (*watcher, error) {
	w := &watcher{log: log, sites: map[string]string{}, roots: map[string]string{},
		parents: map[string]bool{}, polled: map[string]polled{},
		settled: make(chan string, 64), candidates: make(chan string, 64), overflow: make(chan string, 1),
		done: make(chan struct{})}
	w.deb = newDebouncer(clock, settle, w.fire)
	fsw, err := start()
	if err != nil {
		w.add = func(string) error { return errNoWatcher }
		return w, fmt.Errorf("starting the file watcher: %w", err)
	}
	w.fs = fsw
	w.add = fsw.Add
	return w, nil
}

func (w *watcher) close() {
	w.closeOnce.Do(func() {
		close(w.done)
		w.deb.stop()
		if w.fs != nil {
			w.fs.Close()
		}
	})
}

// fire hands a settled key to the engine's loop.
func (w *watcher) fire(key string) {
	ch, v := w.settled, key
	if strings.HasPrefix(key, candidatePrefix) {
		ch, v = w.candidates, strings.TrimPrefix(key, candidatePrefix)
	}
	select {
	case ch <- v:
	case <-w.done:
	}
}

// run reads file events until ctx ends or the watcher is closed.
func (w *watcher) run(ctx context.Context) {
	if w.fs == nil { // polling only
		select {
		case <-ctx.Done():
		case <-w.done:
		}
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.done:
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				select {
				case w.overflow <- "the kernel's file event queue overflowed (a burst of file changes); every environment was read again":
				default:
				}
				continue
			}
			w.log.Warn("file watcher", "err", err)
		}
	}
}

// handle routes one file event.
func (w *watcher) handle(ev fsnotify.Event) {
	name := ev.Name
	dir, base := filepath.Dir(name), filepath.Base(name)
	w.mu.Lock()
	env, candidate, check := "", "", ""
	switch {
	case w.sites[dir] != "":
		// pip moves folders aside to ~-prefixed names before deleting
		// them: those events say nothing about the result.
		if !strings.HasPrefix(base, "~") {
			env = w.sites[dir]
		}
	case w.sites[name] != "":
		env = w.sites[name]
	case w.roots[dir] != "":
		env = w.roots[dir]
	case w.roots[name] != "":
		env = w.roots[name]
	case w.parents[dir] && (base == "pyvenv.cfg" || base == "conda-meta"):
		// A folder we wait on is becoming an environment.
		check = dir
	case w.parents[dir] && (ev.Has(fsnotify.Create) || ev.Has(fsnotify.Rename)):
		candidate = name
	}
	w.mu.Unlock()
	switch {
	case env != "":
		if w.deb.touch(env) && w.onBurst != nil {
			w.onBurst(env)
		}
	case candidate != "":
		if fi, err := os.Stat(candidate); err == nil && fi.IsDir() {
			// Watch the new folder until it becomes an environment (or
			// not): pyvenv.cfg is written after the folder is made.
			w.watchCandidate(candidate)
			w.deb.touch(candidatePrefix + candidate)
		}
	}
	if check != "" {
		w.deb.touch(candidatePrefix + check)
	}
}

// watchCandidate watches a new folder in a root so that pyvenv.cfg or
// conda-meta appearing in it is seen.
func (w *watcher) watchCandidate(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.roots[dir] != "" || w.parents[dir] {
		return
	}
	if err := w.add(dir); err == nil {
		w.parents[dir] = true
	}
}

// watchEnv watches env's site-packages (and, where the platform allows,
// its folder). A watch that cannot be added (an inotify limit) puts the
// environment on polling instead.
func (w *watcher) watchEnv(env *pyenv.Env) {
	if env == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.parents, env.Path) // it was a candidate; now it is an environment
	if watchEnvFolders {
		if err := w.add(env.Path); err != nil {
			w.noteAddError(env.Path, env, err)
		} else {
			w.roots[env.Path] = env.Path
		}
	}
	if env.SitePackages == "" {
		return
	}
	if err := w.add(env.SitePackages); err != nil {
		w.noteAddError(env.SitePackages, env, err)
		return
	}
	w.sites[env.SitePackages] = env.Path
	delete(w.polled, env.Path)
}

// noteAddError puts env on polling when the watch limit is reached.
func (w *watcher) noteAddError(path string, env *pyenv.Env, err error) {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, errNoWatcher) {
		if _, ok := w.polled[env.Path]; !ok {
			w.polled[env.Path] = polled{site: env.SitePackages, mtime: siteMtime(env.SitePackages)}
		}
		if !errors.Is(err, errNoWatcher) { // said once, when the watcher failed
			w.log.Warn("cannot watch; polling instead", "path", path, "err", err)
		}
		return
	}
	if !errors.Is(err, os.ErrNotExist) {
		w.log.Warn("cannot watch", "path", path, "err", err)
	}
}

// unwatchEnv forgets env's watches (it was deleted; the kernel already
// dropped them).
func (w *watcher) unwatchEnv(env *pyenv.Env) {
	if env == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for s, e := range w.sites {
		if e == env.Path {
			delete(w.sites, s)
			w.remove(s)
		}
	}
	delete(w.roots, env.Path)
	w.remove(env.Path)
	delete(w.polled, env.Path)
}

// remove drops a watch, if there is a watcher.
func (w *watcher) remove(path string) {
	if w.fs != nil {
		_ = w.fs.Remove(path)
	}
}

// watchRoot watches a folder where environments appear and vanish.
func (w *watcher) watchRoot(dir string) {
	if !watchEnvFolders {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parents[dir] {
		return
	}
	if err := w.add(dir); err != nil {
		// Without a file watcher at all, Run has said so once already.
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, errNoWatcher) {
			w.log.Warn("cannot watch folder for new environments", "path", dir, "err", err)
		}
		return
	}
	w.parents[dir] = true
}

// recheck reads env again after d (an install still in progress).
func (w *watcher) recheck(env string, d time.Duration) { w.deb.touchAfter(env, d) }

// polled is an environment watched by polling its site-packages.
type polled struct {
	site  string
	mtime time.Time
}

// changedUnwatched lists polled environments whose site-packages changed
// since the last call.
func (w *watcher) changedUnwatched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for env, p := range w.polled {
		if m := siteMtime(p.site); !m.Equal(p.mtime) {
			w.polled[env] = polled{site: p.site, mtime: m}
			out = append(out, env)
		}
	}
	return out
}

func (w *watcher) unwatchedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.polled)
}

// siteMtime is site-packages' modification time: it changes whenever an
// entry is added, removed or renamed, which every install does.
func siteMtime(dir string) time.Time {
	fi, err := os.Stat(dir)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
