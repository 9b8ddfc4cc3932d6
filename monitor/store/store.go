// Package store is GPU Canary's memory across restarts: the last known
// state of each environment and a bounded history of events, as JSON files
// a person can read in the user's state directory.
//
// Every write is atomic (temp file + rename). A corrupt or foreign file is
// set aside with a warning and replaced, never a reason to stop.
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

// Store reads and writes the files in one directory.
type Store struct {
	dir string
	mu  sync.Mutex
	// events is the history in memory, oldest first.
	events []json.RawMessage
	loaded bool
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
// reported as warning; the returned state is then empty.
func (s *Store) LoadState() (st State, warning error) {
	st = State{Format: format, Envs: map[string]EnvRecord{}}
	data, err := safefs.ReadFile(s.statePath(), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading saved state %s: %w", s.statePath(), err)
	}
	var read State
	if err := json.Unmarshal(data, &read); err != nil || read.Format != format {
		why := "not GPU Canary's format"
		if err != nil {
			why = err.Error()
		}
		return st, s.setAside(s.statePath(), why)
	}
	if read.Envs == nil {
		read.Envs = map[string]EnvRecord{}
	}
	return read, nil
}

// SaveState writes st atomically.
func (s *Store) SaveState(st State) error {
	st.Format = format
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	return s.write(s.statePath(), append(data, '\n'))
}

// History returns the saved events, oldest first, decoded into T.
// Undecodable entries are skipped.
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
// writes the file atomically.
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
	data, err := json.MarshalIndent(history{Format: format, Events: s.events}, "", "  ")
	if err != nil {
		return fmt.Errorf("saving event history: %w", err)
	}
	if err := s.write(s.historyPath(), append(data, '\n')); err != nil {
		return err
	}
	return warn
}

// loadHistory reads the history file once; s.mu is held.
func (s *Store) loadHistory() error {
	if s.loaded {
		return nil
	}
	s.loaded = true
	data, err := safefs.ReadFile(s.historyPath(), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading event history %s: %w", s.historyPath(), err)
	}
	var h history
	if err := json.Unmarshal(data, &h); err != nil || h.Format != format {
		why := "not GPU Canary's format"
		if err != nil {
			why = err.Error()
		}
		return s.setAside(s.historyPath(), why)
	}
	s.events = h.Events
	return nil
}

// setAside renames a bad file out of the way and says so.
func (s *Store) setAside(path, why string) error {
	aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("%s is unreadable (%s) and could not be set aside: %w", path, why, err)
	}
	return fmt.Errorf("%s was unreadable (%s); it was moved to %s and a new one started", path, why, aside)
}

// maxFile bounds a read of the state or the history (1000 events are a
// few megabytes).
const maxFile = 256 << 20
