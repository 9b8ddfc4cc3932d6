// Package fixjournal is a repair's journal: the runner (monitor/fix)
// appends to it as a repair goes, and the live engine reads it
// (ReadJournal, JournalNames) to record each repair as events, so the
// engine needs nothing of the runner but this.
package fixjournal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// maxJournalLines bounds the installer output kept in a journal.
const maxJournalLines = 20000

// Journal records one repair in the state directory, one JSON object a
// line, appended as the run goes: when it starts (the plan, the exact
// versions before, the rollback command, who is recording), the
// installer's PID, each line the installer prints, and the result. A run
// cut short, even by kill -9 of GPU Canary itself, leaves everything up
// to that moment and no result, which ReadJournal reports as
// interrupted.
type Journal struct {
	Path string

	mu    sync.Mutex
	f     *os.File
	env   string
	start time.Time
	lines int
	err   error // the first write error, reported by finish
}

// journalEntry is one line of a journal.
type journalEntry struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"` // started, installer, output, finished
	// started
	Env      string            `json:"env,omitempty"`
	Recorder int               `json:"recorder_pid,omitempty"`
	Plan     *fixplan.Plan     `json:"plan,omitempty"`
	Before   map[string]string `json:"before,omitempty"`
	Rollback string            `json:"rollback,omitempty"`
	// installer
	PID int `json:"pid,omitempty"`
	// output
	Line string `json:"line,omitempty"`
	// finished
	Result *Result `json:"result,omitempty"`
}

// NewJournal names a journal file under dir for a run on env.
func NewJournal(dir, env string, now time.Time) *Journal {
	name := fmt.Sprintf("%s-%s%s", now.UTC().Format("20060102T150405.000Z"), safeName(env), journalExt)
	return &Journal{Path: filepath.Join(dir, name), env: env, start: now}
}

// Begin writes the journal's first record (the plan, the versions
// before, the rollback command) and syncs it to disk. Its error means the
// journal cannot be kept (a full disk, a read-only state folder): Run
// stops before changing anything, and no empty journal is left behind.
func (j *Journal) Begin(p fixplan.Plan, before map[string]string, rollback string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(j.Path), 0o700); err != nil {
		return fmt.Errorf("creating the repair journal's folder %s: %w", filepath.Dir(j.Path), err)
	}
	f, err := os.OpenFile(j.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating the repair journal %s: %w", j.Path, err)
	}
	j.f = f
	shown := p.Shown()
	j.appendLocked(journalEntry{Time: j.start, Event: "started", Env: j.env, Recorder: os.Getpid(), Plan: &shown, Before: before, Rollback: rollback})
	if j.err == nil {
		// A full disk can take the write into the page cache and fail
		// only when it is flushed: the sync is what says it is on disk.
		if err := f.Sync(); err != nil {
			j.err = fmt.Errorf("writing repair journal %s: %w", j.Path, err)
		}
	}
	if j.err != nil {
		err := j.err
		f.Close()
		os.Remove(j.Path)
		j.f, j.err = nil, nil
		return err
	}
	return nil
}

func (j *Journal) Installer(pid int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appendLocked(journalEntry{Time: time.Now(), Event: "installer", PID: pid})
}

func (j *Journal) Line(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lines >= maxJournalLines {
		return
	}
	j.lines++
	j.appendLocked(journalEntry{Time: time.Now(), Event: "output", Line: s})
}

func (j *Journal) Finish(r Result) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appendLocked(journalEntry{Time: time.Now(), Event: "finished", Result: &r})
	if j.f != nil {
		if err := j.f.Close(); err != nil && j.err == nil {
			j.err = fmt.Errorf("writing repair journal %s: %w", j.Path, err)
		}
		j.f = nil
	}
	return j.err
}

// appendLocked writes one entry in one write, so a reader after a crash
// sees whole lines.
func (j *Journal) appendLocked(e journalEntry) {
	if j.f == nil || j.err != nil {
		return
	}
	data, err := json.Marshal(e)
	if err == nil {
		_, err = j.f.Write(append(data, '\n'))
	}
	if err != nil {
		j.err = fmt.Errorf("writing repair journal %s: %w", j.Path, err)
	}
}

// JournalRecord is a journal read back.
type JournalRecord struct {
	Path     string
	Started  time.Time
	Env      string
	Plan     fixplan.Plan
	Before   map[string]string
	Rollback string
	// Recorder is the GPU Canary process that ran the repair, and
	// Installer the installer it started.
	Recorder, Installer int
	Output              []string
	// Result is nil when the run never finished.
	Result *Result
	// Finished is when the result was written (zero without one), and
	// Last when the last entry was.
	Finished, Last time.Time
	// Interrupted is true when there is no result and the recorder is no
	// longer running: GPU Canary was killed during the repair.
	Interrupted bool
}

// ReadJournal reads a journal back. A last line cut short by a crash is
// ignored.
func ReadJournal(path string) (JournalRecord, error) {
	f, err := safefs.Open(path)
	if err != nil {
		return JournalRecord{}, fmt.Errorf("reading repair journal: %w", err)
	}
	defer f.Close()
	rec := JournalRecord{Path: path}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Time.After(rec.Last) {
			rec.Last = e.Time
		}
		switch e.Event {
		case "started":
			rec.Started, rec.Env, rec.Recorder, rec.Before, rec.Rollback = e.Time, e.Env, e.Recorder, e.Before, e.Rollback
			if e.Plan != nil {
				rec.Plan = *e.Plan
			}
		case "installer":
			rec.Installer = e.PID
		case "output":
			rec.Output = append(rec.Output, e.Line)
		case "finished":
			rec.Result, rec.Finished = e.Result, e.Time
		}
	}
	if err := sc.Err(); err != nil {
		return rec, fmt.Errorf("reading repair journal %s: %w", path, err)
	}
	if rec.Started.IsZero() {
		return rec, fmt.Errorf("reading repair journal %s: %w", path, errNotJournal)
	}
	rec.Interrupted = rec.Result == nil && !processAlive(rec.Recorder)
	return rec, nil
}

var errNotJournal = errors.New("not a repair journal")

// Running reports whether the repair is still going on now: it has no
// result and the GPU Canary process recording it is alive.
func (r JournalRecord) Running() bool { return r.Result == nil && processAlive(r.Recorder) }

// JournalNames lists the journal files in dir, oldest first (their names
// start with the UTC start time); none when dir does not exist.
func JournalNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing repair journals in %s: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), journalExt) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// journalExt ends every journal's name.
const journalExt = ".jsonl"

// LastJournal is the newest journal in dir about env, or nil when there
// is none.
func LastJournal(dir, env string) (*JournalRecord, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing repair journals in %s: %w", dir, err)
	}
	suffix := "-" + safeName(env) + ".jsonl"
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // names start with the UTC start time
	for i := len(names) - 1; i >= 0; i-- {
		rec, err := ReadJournal(filepath.Join(dir, names[i]))
		if err == nil && rec.Env == env {
			return &rec, nil
		}
	}
	return nil, nil
}

// safeName makes a file-name part of an environment path: "llm-.venv".
func safeName(env string) string {
	s := filepath.Base(filepath.Dir(env)) + "-" + filepath.Base(env)
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// Result is what a repair did.
type Result struct {
	// Fixed is true only when torch is now the planned CUDA build and no
	// error finding remains about torch.
	Fixed bool `json:"fixed"`
	// Why says what went wrong when not fixed.
	Why      string            `json:"why,omitempty"`
	ExitCode int               `json:"exit_code"`
	Before   map[string]string `json:"before"`
	After    map[string]string `json:"after"`
	// Remaining are the error findings still raised after the run.
	Remaining []string `json:"remaining,omitempty"`
	// Interrupted is true when the run was cancelled (Ctrl-C, SIGTERM,
	// Cancel in the tray) or timed out and the installer was stopped.
	Interrupted bool `json:"interrupted,omitempty"`
	// Broken lists what is half-done in the environment after the run:
	// pip's stash of the old version, a package folder without its
	// dist-info. An installer stopped between removing the old torch and
	// installing the new one leaves this; pip does not roll back on
	// Ctrl-C.
	Broken []string `json:"broken,omitempty"`
	// Cleaned are the leftovers of an earlier interrupted run (pip's ~
	// stash folders) removed after this run was verified.
	Cleaned []string `json:"cleaned,omitempty"`
	// Cause is the installer's own words when it failed: its error lines
	// (pip's "ERROR: …", uv's "error: …" and what follows), else its last
	// lines. Empty when the installer did not fail.
	Cause []string `json:"cause,omitempty"`
	// Rollback is the command that puts the previous versions back; it is
	// given only when the run changed something (After differs from
	// Before, or the environment is half-installed).
	Rollback string `json:"rollback,omitempty"`
	Journal  string `json:"journal,omitempty"`
	Duration string `json:"duration"`
}
