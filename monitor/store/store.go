// Package store is GPU Canary's memory across restarts: the last known
// state of each environment, as a JSON file a person can read, and the
// history of events, as a log of JSON lines in the user's state directory.
//
// The state is small and replaced whole, atomically (temp file + rename).
// The history is appended to one event at a time (one write and a sync
// per event, in two files that take turns: see log.go), because
// rewriting all of it per event made a busy engine's memory and disk
// traffic grow with the history rather than with the event.
//
// A corrupt or foreign file is set aside with a warning and replaced,
// never a reason to stop; a damaged line of the history is skipped and
// counted. A file that cannot be read at all (a FIFO, one over the size
// limit, one the user may not read) is not GPU Canary's to replace: it is
// left as it is, and nothing is written over it while this Store lives
// (ErrUnreadable). A folder or file that another user could have written
// is not used at all (ErrUntrusted): what it says is not believed.
package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/owned"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// HistoryLimit is how many events the history keeps at least (once that
// many were recorded); it holds at most twice as many (log.go).
const HistoryLimit = 1000

// format identifies our files, so a foreign JSON file is not mistaken for
// one; formatUnchecked is the state file of versions that kept no
// checksum, read once (from a folder that passed the owner check) and
// written anew in format.
const (
	format          = "gpucanary-state/2"
	formatUnchecked = "gpucanary-state/1"
)

// stateFile is state.json: the state's JSON exactly as written, and its
// SHA-256, so that a file damaged, cut short or edited by hand is set
// aside and never believed (the state says which build of torch each
// environment had, from which an overwrite is told).
type stateFile struct {
	Format string          `json:"format"`
	SHA256 string          `json:"sha256"`
	State  json.RawMessage `json:"state"`
}

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

// ErrUnreadable is wrapped by the errors about a state or history file
// that exists but could not be read and was not set aside: the Store
// leaves it untouched, so saving to it fails with this error too.
var ErrUnreadable = errors.New("left as it is and not written over")

// ErrUntrusted is wrapped by the errors about a state folder, or a file
// in it, that another user could have written (owned.Check): GPU Canary
// neither reads it nor writes to it while this Store lives, and keeps
// working without remembering. The error names the path, its owner and
// mode, and what to do.
var ErrUntrusted = errors.New("not used by GPU Canary")

// Store reads and writes the files in one directory.
type Store struct {
	dir string
	mu  sync.Mutex
	// migrated is set once the first Append readied the folder and the
	// log (openLog). logEvents and logSize are what history.jsonl holds,
	// when logCounted: known without reading it again as long as its
	// size is what this Store left it at.
	migrated   bool
	logEvents  int
	logSize    int64
	logCounted bool
	// unsaved are this run's events, oldest first, when the history is
	// not written (historyBlocked): History still shows them. Bounded by
	// HistoryLimit.
	unsaved [][]byte
	// historyBlocked and stateBlocked are why the history or the state
	// file is not written (ErrUnreadable, ErrUntrusted); nil when it may
	// be.
	historyBlocked error
	stateBlocked   error
	// private checks the folder once, before the first write: it must be
	// the user's alone (it holds command lines of the user's processes),
	// created 0700 when missing.
	private sync.Once
	privErr error
}

// prepare makes the folder ready for writing, once: created 0700 when
// missing, refused when another user could have written it, and made
// 0700 when it is the user's but readable by others (an older version
// made it 0755).
func (s *Store) prepare() error {
	s.private.Do(func() {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			s.privErr = fmt.Errorf("creating the state folder %s: %w", s.dir, err)
			return
		}
		if err := s.trusted(s.dir); err != nil {
			s.privErr = err
			return
		}
		s.privErr = config.PrivateDir(s.dir)
	})
	return s.privErr
}

// trusted is owned.Check of the state folder or a file in it, as this
// package's error: nil, an absent path (fs.ErrNotExist), or an error
// wrapping ErrUntrusted that says what to do.
func (s *Store) trusted(path string) error {
	err := owned.Check(path, owned.Policy{})
	var u *owned.Untrusted
	if errors.As(err, &u) {
		return fmt.Errorf("%w; it is %w: make it yours and writable by you alone (chmod go-w), or set %s to a folder of your own", u, ErrUntrusted, DirVariable)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checking the state folder %s: %w; it is %w", s.dir, err, ErrUntrusted)
	}
	return err
}

// write replaces one of the store's files, in a folder only the user
// can read.
func (s *Store) write(path string, data []byte) error {
	if err := s.prepare(); err != nil {
		return err
	}
	return config.WriteAtomic(path, data, 0o600)
}

// Dir is the default state directory: $XDG_STATE_HOME/gpucanary (or
// ~/.local/state/gpucanary), %LOCALAPPDATA%\gpucanary on Windows.
func Dir() (string, error) { return stateDir() }

// Open returns a store over dir; nothing is read until asked.
func Open(dir string) *Store { return &Store{dir: dir} }

func (s *Store) statePath() string { return filepath.Join(s.dir, "state.json") }

// LoadState reads the last saved state. A missing file is an empty state.
// A corrupt or foreign file is renamed aside (state.json.corrupt-TIME) and
// reported as warning; the returned state is then empty. A file that
// cannot be read (a FIFO, EACCES, over the size limit) is reported as a
// warning wrapping ErrUnreadable, the returned state is empty, and
// SaveState refuses to write over the file from then on. A folder or file
// another user could have written is not read: the warning wraps
// ErrUntrusted, the state is empty, and SaveState refuses too.
func (s *Store) LoadState() (st State, warning error) {
	st = State{Format: format, Envs: map[string]EnvRecord{}}
	data, err := s.read(s.statePath(), "saved state")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, s.blockState(err)
	}
	read, err := decodeState(data)
	if err != nil {
		return st, s.blockState(s.setAside(s.statePath(), err.Error()))
	}
	return read, nil
}

// blockState makes SaveState refuse to write when err says the state
// file is to be left as it is (ErrUnreadable, ErrUntrusted); it returns
// err.
func (s *Store) blockState(err error) error {
	if errors.Is(err, ErrUnreadable) || errors.Is(err, ErrUntrusted) {
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
	body, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	data, err := json.MarshalIndent(stateFile{Format: format, SHA256: stateSum(body), State: body}, "", "  ")
	if err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	return s.write(s.statePath(), append(data, '\n'))
}

// stateSum is the SHA-256 of a state's JSON in its compact form: the
// file holds it indented for a person to read, and whitespace is not
// what the sum guards.
func stateSum(js []byte) string {
	var compact bytes.Buffer
	if json.Compact(&compact, js) != nil {
		return ""
	}
	sum := sha256.Sum256(compact.Bytes())
	return hex.EncodeToString(sum[:])
}

// decodeState reads a state file: its state when the checksum holds
// over the state's JSON; an error saying what
// is wrong otherwise. A file of the unchecked format is read as it is.
func decodeState(data []byte) (State, error) {
	var f stateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return State{}, err
	}
	var st State
	switch f.Format {
	case format:
		if stateSum(f.State) != f.SHA256 {
			return State{}, errors.New("its checksum does not match what it holds: it was changed or damaged after GPU Canary wrote it")
		}
		if err := json.Unmarshal(f.State, &st); err != nil {
			return State{}, err
		}
	case formatUnchecked:
		if err := json.Unmarshal(data, &st); err != nil {
			return State{}, err
		}
	default:
		return State{}, errors.New("not GPU Canary's format")
	}
	st.Format = format
	if st.Envs == nil {
		st.Envs = map[string]EnvRecord{}
	}
	return st, nil
}

// read reads one of the store's files (what names it in messages). A
// file that is there and is GPU Canary's to parse comes back as data; one
// that is absent as fs.ErrNotExist; one that cannot be read as an error
// wrapping ErrUnreadable.
func (s *Store) read(path, what string) ([]byte, error) {
	for _, p := range []string{s.dir, path} { // the folder first: a file absent from an untrusted one is no answer
		if err := s.trusted(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
	}
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
	return fmt.Errorf("%s was unreadable (%s); it was %w to %s and a new one started", path, why, errSetAside, aside)
}

// errSetAside is wrapped by setAside's warning when the file was moved
// out of the way: a new one starts.
var errSetAside = errors.New("moved")

// FileLimit bounds a read of the state or of a history of the old format
// (1000 events were a few megabytes): a longer file is not read, and not
// written over either.
const FileLimit = 256 << 20
