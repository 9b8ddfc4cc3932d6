package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// The history's files. Events are appended to history.jsonl; when it is
// full it becomes history.1.jsonl (replacing the one before) and a new
// one starts, so the two hold at least HistoryLimit events (once that
// many were recorded) and at most twice as many, and the cost of an
// event is its own line whatever the history's length. events.json is
// the history of versions before the log (one JSON document rewritten
// per event): it is turned into the log once, by the first Append.
const (
	logName     = "history.jsonl"
	rotatedName = "history.1.jsonl"
	oldName     = "events.json"
)

const (
	// segmentEvents and segmentBytes say when history.jsonl is full: at
	// HistoryLimit events, or earlier when its events are large (a
	// thousand events are about a megabyte; four is room for long
	// messages and command lines without letting the files grow
	// unbounded).
	segmentEvents = HistoryLimit
	segmentBytes  = 4 << 20
	// maxLine bounds one event's line. A longer one is not written, and
	// one found while reading is damaged: reading back never holds more
	// than this of one line in memory.
	maxLine = 1 << 20
)

func (s *Store) logPath() string     { return filepath.Join(s.dir, logName) }
func (s *Store) rotatedPath() string { return filepath.Join(s.dir, rotatedName) }
func (s *Store) oldPath() string     { return filepath.Join(s.dir, oldName) }

// A line of the log is one JSON object, {"crc32c":"…","event":EVENT}: a
// JSON Lines file any tool reads, whose checksum (CRC-32C of EVENT's
// bytes as written) tells a line that was cut short, overwritten or
// edited from one GPU Canary wrote. The checksum comes first and the
// event last, byte for byte, so a line is checked without decoding it.
const (
	linePrefix = `{"crc32c":"`
	lineMiddle = `","event":`
	lineHead   = len(linePrefix) + 8 + len(lineMiddle)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame is the line, newline included, that holds the event raw (compact
// JSON: no newline in it).
func frame(raw []byte) []byte {
	line := make([]byte, 0, lineHead+len(raw)+2)
	line = append(line, linePrefix...)
	line = fmt.Appendf(line, "%08x", crc32.Checksum(raw, castagnoli))
	line = append(line, lineMiddle...)
	line = append(line, raw...)
	return append(line, '}', '\n')
}

// unframe is the event of a line (without its newline), and whether the
// line is whole: its form is frame's and its checksum holds.
func unframe(line []byte) ([]byte, bool) {
	if len(line) < lineHead+2 || !bytes.HasPrefix(line, []byte(linePrefix)) ||
		string(line[len(linePrefix)+8:lineHead]) != lineMiddle || line[len(line)-1] != '}' {
		return nil, false
	}
	sum, err := strconv.ParseUint(string(line[len(linePrefix):len(linePrefix)+8]), 16, 32)
	raw := line[lineHead : len(line)-1]
	return raw, err == nil && crc32.Checksum(raw, castagnoli) == uint32(sum)
}

// Append adds events to the history: one line each, appended with one
// write per event (O_APPEND) and synced once the events are written.
// Nothing else of the history is read or written, except when the log
// turns over (a rename) and at the first Append of a Store (the log's
// length is counted, and a history of the old format migrated). When the
// history cannot be written (a file left alone, ErrUnreadable; a folder
// or file another user could have written, ErrUntrusted), the events are
// kept in memory only (History shows them) and the error says why.
func (s *Store) Append(events ...any) error {
	lines := make([][]byte, 0, len(events))
	for _, e := range events {
		raw, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("saving an event to the history in %s: %w", s.dir, err)
		}
		if len(raw)+lineHead+2 > maxLine {
			return fmt.Errorf("saving an event to the history in %s: it is %d bytes, over the %d a line may hold", s.dir, len(raw), maxLine)
		}
		lines = append(lines, raw)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	warn := s.openLog()
	if warn != nil && !s.migrated && s.historyBlocked == nil {
		return warn // not ready; tried again at the next Append
	}
	if s.historyBlocked == nil {
		if err := s.appendLines(lines); err != nil && s.historyBlocked == nil {
			return err
		}
	}
	if s.historyBlocked != nil {
		s.unsaved = append(s.unsaved, lines...)
		if n := len(s.unsaved) - HistoryLimit; n > 0 {
			s.unsaved = append([][]byte(nil), s.unsaved[n:]...)
		}
		return s.historyBlocked
	}
	return warn
}

// openLog readies the folder and migrates a history of the old format,
// once; s.mu is held. An error that blocks the history sets
// historyBlocked; a warning (a bad old file set aside) is returned once,
// with s.migrated set; any other error leaves s.migrated unset, to be
// tried again.
func (s *Store) openLog() error {
	if s.migrated || s.historyBlocked != nil {
		return nil
	}
	if err := s.prepare(); err != nil {
		if errors.Is(err, ErrUntrusted) {
			s.historyBlocked = err
		}
		return err
	}
	warn := s.migrate()
	if errors.Is(warn, ErrUnreadable) || errors.Is(warn, ErrUntrusted) {
		s.historyBlocked = warn
		return warn
	}
	if warn == nil || errors.Is(warn, errSetAside) {
		s.migrated = true
	}
	return warn
}

// appendLines writes each event's line to history.jsonl, turning the log
// over before a line that would not fit; s.mu is held.
func (s *Store) appendLines(raws [][]byte) error {
	f, err := s.openSegment()
	if err != nil {
		return err
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for _, raw := range raws {
		line := frame(raw)
		if s.logEvents > 0 && (s.logEvents >= segmentEvents || s.logSize+int64(len(line)) > segmentBytes) {
			f.Close()
			f = nil
			if err := os.Rename(s.logPath(), s.rotatedPath()); err != nil {
				s.logCounted = false
				return fmt.Errorf("turning the history %s over to %s: %w", s.logPath(), s.rotatedPath(), err)
			}
			if f, err = s.openSegment(); err != nil {
				return err
			}
		}
		n, err := f.Write(line)
		s.logSize += int64(n)
		s.logEvents++
		if err != nil {
			s.logCounted = false // the line may be cut short: count again
			return fmt.Errorf("appending to the history %s: %w", s.logPath(), err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing the history %s: %w", s.logPath(), err)
	}
	return nil
}

// openSegment opens history.jsonl for appending (created 0600), refusing
// a file another user could have written and anything but a regular
// file, and knows how many events it holds: counted from the file when
// this Store did not write all of it. A file that does not end in a
// newline (a write cut short) is given one, so that the next line is
// whole. s.mu is held.
func (s *Store) openSegment() (*os.File, error) {
	p := s.logPath()
	if err := s.trusted(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.historyBlocked = fmt.Errorf("appending to the history: %w", err)
		return nil, s.historyBlocked
	}
	f, err := openAppend(p)
	if err != nil {
		if errors.Is(err, safefs.ErrNotRegular) {
			s.historyBlocked = fmt.Errorf("opening the history %s: %w; it is %w", p, err, ErrUnreadable)
			return nil, s.historyBlocked
		}
		return nil, fmt.Errorf("opening the history %s: %w", p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the history %s: %w", p, err)
	}
	if s.logCounted && fi.Size() == s.logSize {
		return f, nil
	}
	s.logEvents, s.logSize, s.logCounted = 0, fi.Size(), true
	if fi.Size() == 0 {
		return f, nil
	}
	if fi.Size() > segmentBytes {
		s.logEvents = segmentEvents // full: the next line turns it over
		return f, nil
	}
	data, err := safefs.ReadFile(p, segmentBytes)
	if err != nil {
		f.Close()
		s.logCounted = false
		return nil, fmt.Errorf("counting the events of the history %s: %w", p, err)
	}
	s.logEvents = bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			s.logCounted = false
			return nil, fmt.Errorf("ending the last line of the history %s: %w", p, err)
		}
		s.logSize++
		s.logEvents++
	}
	return f, nil
}

// migrate turns a history of the old format (events.json) into the log,
// once: its events become history.jsonl's lines, oldest first, and the
// old file is removed only once the log is written and synced, so the
// user's history is kept whatever stops the migration. Nothing is done
// when the log is there already. s.mu is held.
func (s *Store) migrate() error {
	if _, err := os.Lstat(s.logPath()); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	raws, err := s.readOld(true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, raw := range raws[max(0, len(raws)-segmentEvents):] {
		var compact bytes.Buffer
		if json.Compact(&compact, raw) != nil {
			continue
		}
		buf.Write(frame(compact.Bytes()))
	}
	if err := config.ReplaceFile(s.logPath(), buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("migrating the history %s to %s: %w", s.oldPath(), s.logPath(), err)
	}
	if err := os.Remove(s.oldPath()); err != nil {
		return fmt.Errorf("removing the history %s, migrated to %s: %w", s.oldPath(), s.logPath(), err)
	}
	return nil
}

// oldHistory is the old format's document.
type oldHistory struct {
	Format string            `json:"format"`
	Events []json.RawMessage `json:"events"`
}

// readOld reads the old format's events, oldest first. A corrupt or
// foreign file is a warning; with setAside it is also moved out of the
// way (the warning wraps errSetAside), as the writer does, where a
// reader (one that may run beside the engine) leaves it.
func (s *Store) readOld(setAside bool) ([]json.RawMessage, error) {
	data, err := s.read(s.oldPath(), "event history")
	if err != nil {
		return nil, err
	}
	var h oldHistory
	if err := json.Unmarshal(data, &h); err != nil || h.Format != format {
		why := "not GPU Canary's format"
		if err != nil {
			why = err.Error()
		}
		if !setAside {
			return nil, fmt.Errorf("reading the event history %s: %s", s.oldPath(), why)
		}
		return nil, s.setAside(s.oldPath(), why)
	}
	return h.Events, nil
}

// regular returns f when it is a regular file; else it closes it.
func regular(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, safefs.ErrNotRegular
	}
	return f, nil
}
