// Package store is GPU Canary's memory across restarts: the last known
// state of each environment and a bounded history of events, as JSON files
// a person can read in the user's state directory.
//
// Every write is atomic (temp file + rename). A corrupt or foreign file is
// set aside with a warning and replaced, never a reason to stop. A file
// that cannot be read at all (a FIFO, one over the size limit, one the
// user may not read) is not GPU Canary's to replace: it is left as it is,
// and nothing is written over it while this Store lives (ErrUnreadable).
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// HistoryLimit is how many events the history keeps.
const HistoryLimit = 1000

// format identifies our files, so a foreign JSON file is not mistaken for one.
const format = "gpucanary-state/1"

// EnvRecord is what was last known of one environment.
type EnvRecord struct {
	Torch *pyenv.Package `json:"torch"`
	// Findings are the keys of the findings raised about it, so a restart
	// does not raise (and notify) them again.
	Findings []string `json:"findings,omitempty"`
	// Told is what was said of each of them, by key, so a restart raises
	// again a finding whose verdict changed while GPU Canary was not
	// running (a GPU that appeared). State files of earlier versions have
	// none.
	Told map[string]Told `json:"told,omitempty"`
	Seen time.Time       `json:"seen"`
	// TorchChanged and TorchReplaced are when torch last changed and when
	// a CUDA torch was last replaced, so an alert on a replacement
	// survives a restart of the engine.
	TorchChanged  time.Time `json:"torch_changed,omitzero"`
	TorchReplaced time.Time `json:"torch_replaced,omitzero"`
}

// Told is the verdict of a finding as it was told: its severity and the
// command that fixes it.
type Told struct {
	Severity string `json:"severity"`
	Fix      string `json:"fix,omitempty"`
}

// State is the last known state of every watched environment.
type State struct {
	Format string               `json:"format"`
	Saved  time.Time            `json:"saved"`
	Envs   map[string]EnvRecord `json:"envs"`
	// Repairs is what the engine published of each repair journal, by
	// file name ("started", "ended"); nil when repairs were never
	// recorded (an older state file).
	Repairs map[string]string `json:"repairs"`
}

type history struct {
	Format string            `json:"format"`
	Events []json.RawMessage `json:"events"`
}

// ErrUnreadable is wrapped by the errors about a state or history file
// that exists but could not be read and was not set aside: the Store
// leaves it untouched, so saving to it fails with this error too.
var ErrUnreadable = errors.New("left as it is and not written over")

// Store reads and writes the files in one directory.
type Store struct {
	dir string
	mu  sync.Mutex
	// events is the history in memory, oldest first.
	events []json.RawMessage
	loaded bool
	// historyBlocked and stateBlocked are why the history or the state
	// file is not written (ErrUnreadable); nil when it may be.
	historyBlocked error
	stateBlocked   error
	// private makes the folder the user's alone, once, before the first
	// write: it holds command lines of the user's processes.
	private sync.Once
	privErr error
}

// write replaces one of the store's files, in a folder only the user
// can read.
func (s *Store) write(path string, data []byte) error {
	s.private.Do(func() { s.privErr = config.PrivateDir(s.dir) })
	if s.privErr != nil {
		return s.privErr
	}
	return config.WriteAtomic(path, data, 0o600)
}

// Dir is the default state directory: $XDG_STATE_HOME/gpucanary (or
// ~/.local/state/gpucanary), %LOCALAPPDATA%\gpucanary on Windows.
func Dir() (string, error) { return stateDir() }

// Open returns a store over dir; nothing is read until asked.
func Open(dir string) *Store { return &Store{dir: dir} }

func (s *Store) statePath() string   { return filepath.Join(s.dir, "state.json") }
func (s *Store) historyPath() string { return filepath.Join(s.dir, "events.json") }

// LoadState reads the last saved state. A missing file is an empty state.
// A corrupt or foreign file is renamed aside (state.json.corrupt-TIME) and
// reported as warning; the returned state is then empty. A file that
// cannot be read (a FIFO, EACCES, over the size limit) is reported as a
// warning wrapping ErrUnreadable, the returned state is empty, and
// SaveState refuses to write over the file from then on.
func (s *Store) LoadState() (st State, warning error) {
	st = State{Format: format, Envs: map[string]EnvRecord{}}
	data, err := s.read(s.statePath(), "saved state")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, s.blockState(err)
	}
	var read State
	if err := json.Unmarshal(data, &read); err != nil || read.Format != format {
		why := "not GPU Canary's format"
		if err != nil {
			why = err.Error()
		}
		return st, s.blockState(s.setAside(s.statePath(), why))
	}
	if read.Envs == nil {
		read.Envs = map[string]EnvRecord{}
	}
	return read, nil
}

// blockState makes SaveState refuse to write when err says the state
// file is to be left as it is (ErrUnreadable); it returns err.
func (s *Store) blockState(err error) error {
	if errors.Is(err, ErrUnreadable) {
		s.mu.Lock()
		s.stateBlocked = err
		s.mu.Unlock()
	}
	return err
}

// SaveState writes st atomically, unless LoadState found a file it could
// not read (ErrUnreadable).
func (s *Store) SaveState(st State) error {
	s.mu.Lock()
	blocked := s.stateBlocked
	s.mu.Unlock()
	if blocked != nil {
		return blocked
	}
	st.Format = format
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	return s.write(s.statePath(), append(data, '\n'))
}

// History returns the saved events, oldest first, decoded into T.
// Undecodable entries are skipped. When the history file could not be
// read, the events are this run's only and the error says why.
func History[T any](s *Store) ([]T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	warn := s.loadHistory()
	out := make([]T, 0, len(s.events))
	for _, raw := range s.events {
		var v T
		if json.Unmarshal(raw, &v) == nil {
			out = append(out, v)
		}
	}
	return out, warn
}

// Append adds events to the history, keeps the last HistoryLimit and
// writes the file atomically. When the history file exists but could not
// be read, the events are kept in memory only (History shows them) and
// the error, wrapping ErrUnreadable, says the file was left as it is.
func (s *Store) Append(events ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	warn := s.loadHistory()
	for _, e := range events {
		raw, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("saving event history: %w", err)
		}
		s.events = append(s.events, raw)
	}
	if n := len(s.events) - HistoryLimit; n > 0 {
		s.events = append([]json.RawMessage(nil), s.events[n:]...)
	}
	if s.historyBlocked != nil {
		return s.historyBlocked
	}
	data, err := json.MarshalIndent(history{Format: format, Events: s.events}, "", "  ")
	if err != nil {
		return fmt.Errorf("saving event history: %w", err)
	}
	if err := s.write(s.historyPath(), append(data, '\n')); err != nil {
		return err
	}
	return warn
}

// loadHistory reads the history file once; s.mu is held. Only an absent
// file, or a corrupt one set aside, starts an empty history on disk; a
// file that could not be read blocks writing it (historyBlocked), so the
// user's history is never replaced by this run's few events.
func (s *Store) loadHistory() error {
	if s.loaded {
		return s.historyBlocked
	}
	s.loaded = true
	data, err := s.read(s.historyPath(), "event history")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		s.historyBlocked = err
		return err
	}
	var h history
	if err := json.Unmarshal(data, &h); err != nil || h.Format != format {
		why := "not GPU Canary's format"
		if err != nil {
			why = err.Error()
		}
		err := s.setAside(s.historyPath(), why)
		if errors.Is(err, ErrUnreadable) {
			s.historyBlocked = err
		}
		return err
	}
	s.events = h.Events
	return nil
}

// read reads one of the store's files (what names it in messages). A
// file that is there and is GPU Canary's to parse comes back as data; one
// that is absent as fs.ErrNotExist; one that cannot be read as an error
// wrapping ErrUnreadable.
func (s *Store) read(path, what string) ([]byte, error) {
	data, err := safefs.ReadFile(path, FileLimit)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	return nil, fmt.Errorf("reading %s %s: %w; it is %w until it can be read and GPU Canary restarts", what, path, err, ErrUnreadable)
}

// setAside renames a bad file out of the way and says so. A file that
// cannot be moved is ErrUnreadable: left where it is, never replaced.
func (s *Store) setAside(path, why string) error {
	aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("%s is unreadable (%s) and could not be set aside (%w), so it is %w", path, why, err, ErrUnreadable)
	}
	return fmt.Errorf("%s was unreadable (%s); it was moved to %s and a new one started", path, why, aside)
}

// FileLimit bounds a read of the state or the history (1000 events are a
// few megabytes): a longer file is not read, and not written over either.
const FileLimit = 256 << 20
