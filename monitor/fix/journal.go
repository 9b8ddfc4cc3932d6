package fix

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// maxJournalLines bounds the installer output kept in a journal.
const maxJournalLines = 20000

// Journal records one repair in the state directory: the plan, the exact
// versions before (so the rollback command can be shown), the installer's
// output and the result. It is written when the run starts, so even a run
// that never finishes leaves a record, and again when it ends.
type Journal struct {
	Path string

	mu  sync.Mutex
	rec journalRecord
}

type journalRecord struct {
	Started  time.Time         `json:"started"`
	Finished *time.Time        `json:"finished,omitempty"`
	Plan     Plan              `json:"plan"`
	Before   map[string]string `json:"before"`
	Rollback string            `json:"rollback,omitempty"`
	Output   []string          `json:"output"`
	Result   *Result           `json:"result,omitempty"`
}

// NewJournal names a journal file under dir for a run on env.
func NewJournal(dir, env string, now time.Time) *Journal {
	name := fmt.Sprintf("%s-%s.json", now.UTC().Format("20060102T150405.000Z"), safeName(env))
	return &Journal{Path: filepath.Join(dir, name), rec: journalRecord{Started: now, Output: []string{}}}
}

func (j *Journal) begin(p Plan, before map[string]string, rollback string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.rec.Plan, j.rec.Before, j.rec.Rollback = p, before, rollback
	_ = j.writeLocked() // best effort: the final write reports errors
}

func (j *Journal) line(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.rec.Output) < maxJournalLines {
		j.rec.Output = append(j.rec.Output, s)
	}
}

func (j *Journal) finish(r Result) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := time.Now()
	j.rec.Finished, j.rec.Result = &now, &r
	return j.writeLocked()
}

func (j *Journal) writeLocked() error {
	data, err := json.MarshalIndent(j.rec, "", "  ")
	if err != nil {
		return fmt.Errorf("writing repair journal: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(j.Path), 0o700); err != nil {
		return fmt.Errorf("writing repair journal: %w", err)
	}
	return config.WriteAtomic(j.Path, append(data, '\n'), 0o600)
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
