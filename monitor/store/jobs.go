package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"
)

// jobs.json keeps the records of the last jobs that ended (what the
// engine saw of each: its samples of the last minutes, its end), so that
// `gpucanary report --job PID`, another process run later, can write what
// happened to one. It is small and replaced whole like the state (one
// write per job that ended, a few an hour at most), checked by its
// SHA-256 like the state, and read and written under the same rules: a
// folder or file another user could have written is neither believed nor
// written; a damaged file is set aside.

// JobsKept is how many job records jobs.json holds: the newest. A record
// is bounded by what the engine keeps of a job (30 minutes of samples:
// about 100 KiB a GPU at the default poll), so the file stays within a
// few megabytes.
const JobsKept = 16

const jobsFormat = "gpucanary-jobs/1"

// jobsFile is jobs.json: its records' JSON exactly as written, and its
// SHA-256.
type jobsFile struct {
	Format string          `json:"format"`
	SHA256 string          `json:"sha256"`
	Jobs   json.RawMessage `json:"jobs"`
}

// jobEntry is one job's record, found by its PID and start.
type jobEntry struct {
	PID     int             `json:"pid"`
	Started time.Time       `json:"started,omitzero"`
	Saved   time.Time       `json:"saved"`
	Record  json.RawMessage `json:"record"`
}

func (s *Store) jobsPath() string { return filepath.Join(s.dir, "jobs.json") }

// SaveJob adds the record of a job that ended (rec, any JSON value), by
// its PID and start, to jobs.json, replacing a record of the same job
// and dropping the oldest beyond JobsKept. A jobs.json that cannot be
// read is left as it is (the error wraps ErrUnreadable); one damaged is
// set aside and a new one started.
func (s *Store) SaveJob(pid int, started time.Time, rec any) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("saving the record of job %d: %w", pid, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.readJobs()
	if err != nil && !errors.Is(err, errSetAside) {
		return fmt.Errorf("saving the record of job %d: %w", pid, err)
	}
	entries = slices.DeleteFunc(entries, func(e jobEntry) bool { return e.PID == pid && e.Started.Equal(started) })
	entries = append(entries, jobEntry{PID: pid, Started: started, Saved: time.Now().UTC(), Record: raw})
	if n := len(entries) - JobsKept; n > 0 {
		entries = slices.Delete(entries, 0, n)
	}
	body, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("saving the record of job %d: %w", pid, err)
	}
	data, err := json.Marshal(jobsFile{Format: jobsFormat, SHA256: stateSum(body), Jobs: body})
	if err != nil {
		return fmt.Errorf("saving the record of job %d: %w", pid, err)
	}
	return s.write(s.jobsPath(), append(data, '\n'))
}

// readJobs is what jobs.json holds, oldest first: nothing when it is
// absent; nothing and a warning wrapping errSetAside when it was damaged
// and set aside; an error when it could not be read or is not to be
// believed (ErrUnreadable, ErrUntrusted).
func (s *Store) readJobs() ([]jobEntry, error) {
	data, err := s.read(s.jobsPath(), "job records")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var f jobsFile
	var entries []jobEntry
	switch {
	case json.Unmarshal(data, &f) != nil || f.Format != jobsFormat:
		return nil, s.setAside(s.jobsPath(), "not GPU Canary's job records")
	case stateSum(f.Jobs) != f.SHA256:
		return nil, s.setAside(s.jobsPath(), "its checksum does not match what it holds: it was changed or damaged after GPU Canary wrote it")
	case json.Unmarshal(f.Jobs, &entries) != nil:
		return nil, s.setAside(s.jobsPath(), "its records are not GPU Canary's")
	}
	return entries, nil
}

// Job is the newest record of a job with the PID pid that jobs.json
// holds, decoded into T; ok is false when it holds none. A damaged
// jobs.json is not believed (nor moved: a report may run beside the
// engine): the error says so.
func Job[T any](s *Store, pid int) (rec T, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := s.read(s.jobsPath(), "job records")
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	var f jobsFile
	var entries []jobEntry
	if json.Unmarshal(data, &f) != nil || f.Format != jobsFormat || stateSum(f.Jobs) != f.SHA256 || json.Unmarshal(f.Jobs, &entries) != nil {
		return rec, false, fmt.Errorf("reading job records %s: it is damaged or not GPU Canary's, and is not believed", s.jobsPath())
	}
	for _, e := range slices.Backward(entries) {
		if e.PID != pid {
			continue
		}
		if err := json.Unmarshal(e.Record, &rec); err != nil {
			return rec, false, fmt.Errorf("reading the record of job %d in %s: %w", pid, s.jobsPath(), err)
		}
		return rec, true, nil
	}
	return rec, false, nil
}
