package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Read is what a read of the history met besides its events.
type Read struct {
	// Damaged counts the lines skipped: cut short, edited, not GPU
	// Canary's, or not an event of the type asked for.
	Damaged int
}

// History reads up to limit events of the history, newest first, decoded
// into T. It reads the log from its end, a block at a time, and stops at
// limit: what it costs is what it returns, not the history's length. A
// line whose checksum or JSON does not hold is skipped and counted
// (Read.Damaged). Before the first Append of a new version, a history of
// the old format is read as it is (never moved: a reader may run beside
// the engine that migrates it). When the history is not written
// (ErrUnreadable, ErrUntrusted), the events are this run's only and the
// error says why.
func History[T any](s *Store, limit int) ([]T, Read, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var read Read
	out := make([]T, 0, min(limit, HistoryLimit))
	take := func(raw []byte) bool {
		var v T
		if json.Unmarshal(raw, &v) != nil {
			read.Damaged++
			return true
		}
		out = append(out, v)
		return len(out) < limit
	}
	if limit <= 0 {
		return out, read, nil
	}
	if s.historyBlocked != nil {
		for _, raw := range slices.Backward(s.unsaved) {
			if !take(raw) {
				break
			}
		}
		return out, read, s.historyBlocked
	}
	if err := s.trusted(s.dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return out, read, err
	}
	if _, err := os.Lstat(s.logPath()); errors.Is(err, fs.ErrNotExist) && !s.migrated {
		raws, err := s.readOld(false)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		for _, raw := range slices.Backward(raws) {
			if !take(raw) {
				break
			}
		}
		return out, read, err
	}
	var errs []error
	var seen []os.FileInfo
	for _, p := range []string{s.logPath(), s.rotatedPath()} {
		more, err := s.readBackward(p, &seen, func(line []byte) bool {
			raw, ok := unframe(line)
			if !ok {
				read.Damaged++
				return true
			}
			return take(raw)
		})
		if err != nil {
			errs = append(errs, err)
		}
		if !more {
			break
		}
	}
	return out, read, errors.Join(errs...)
}

// readBackward gives each line of the log file at p to yield, newest
// first, until yield returns false (then more is false). A line longer
// than maxLine is given as nil (damaged), and the line being written
// (no newline yet) not at all. A file not there is no lines; one another
// user could have written is not read. seen are the files read before,
// so that a file turned over between two opens is not read twice.
func (s *Store) readBackward(p string, seen *[]os.FileInfo, yield func([]byte) bool) (more bool, err error) {
	if err := s.trusted(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return true, fmt.Errorf("reading the history: %w", err)
	}
	f, err := safefs.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return true, fmt.Errorf("reading the history %s: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return true, fmt.Errorf("reading the history %s: %w", p, err)
	}
	for _, o := range *seen {
		if os.SameFile(o, fi) {
			return true, nil
		}
	}
	*seen = append(*seen, fi)
	more, err = eachLineBackward(f, fi.Size(), yield)
	if err != nil {
		return more, fmt.Errorf("reading the history %s: %w", p, err)
	}
	return more, nil
}

// backBlock is how much of a log is read at a time, from its end.
const backBlock = 64 << 10

// eachLineBackward gives the lines of the first size bytes of r to
// yield, last first, without their newline; see readBackward.
func eachLineBackward(r io.ReaderAt, size int64, yield func([]byte) bool) (bool, error) {
	var pending []byte // a line (and its newline) whose start is further back
	// dropping: the bytes after the last newline found are not a whole
	// line (the one being written, or the rest of one over maxLine).
	dropping := true
	end := size
	for end > 0 {
		start := max(0, end-backBlock)
		data := make([]byte, int(end-start)+len(pending))
		if _, err := r.ReadAt(data[:end-start], start); err != nil && !errors.Is(err, io.EOF) {
			return true, err
		}
		copy(data[end-start:], pending)
		end = start
		if dropping {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				pending = nil
				continue
			}
			data, dropping = data[:i+1], false
		}
		for {
			body := data[:len(data)-1]
			i := bytes.LastIndexByte(body, '\n')
			if i < 0 {
				break
			}
			if line := body[i+1:]; len(line) > 0 && !yield(line) {
				return false, nil
			}
			data = data[:i+1]
		}
		pending = data
		if len(pending) > maxLine {
			if !yield(nil) {
				return false, nil
			}
			pending, dropping = nil, true
		}
	}
	if len(pending) > 1 && !dropping && !yield(pending[:len(pending)-1]) {
		return false, nil
	}
	return true, nil
}
