// Package answers keeps each environment's finished answer (`check
// --json`'s report, encoded, and its verdict) with what its read looked
// at (monitor/fstrace), and gives it back while all of that still holds:
// a check of a thousand environments that have not changed is then a
// few stats each and their bytes written out, not a thousand reads,
// judgements and encodings. An answer depends on more than its files:
// the program, the GPU, the settings and the facts in force make the
// store's inputs, and an answer kept under other inputs is not looked
// at.
//
// Each answer is a file of its own in the store's folder, written whole
// and renamed into place, so that two runs at once each see a whole
// answer or none; one that cannot be decoded is a miss. Answers older
// than MaxAge are removed when answers are next kept, at most once a day
// (monitor/cachefiles, as the file facts are).
package answers

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/cachefiles"

	"github.com/gpucanary/gpucanary/monitor/fstrace"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Answer is one environment's answer as `check --json` writes it.
type Answer struct {
	// Verdict is the report's verdict ("ok", "error", ...): the exit
	// status depends on it.
	Verdict string
	// JSON is the report, encoded.
	JSON []byte
}

// Store keeps answers in a folder under fixed inputs. A nil *Store
// keeps nothing.
type Store struct {
	dir     string
	inputs  [sha256.Size]byte
	getenv  func(string) string
	checker *fstrace.Checker
	now     func() time.Time
	swept   sync.Once
}

// MaxAge is how long an answer is kept: the answers of environments
// deleted or moved do not pile up, and one still in use is read afresh
// once in that time.
const MaxAge = 30 * 24 * time.Hour

// fileLimit bounds one answer's file: a report is kilobytes.
const fileLimit = 16 << 20

// magic starts every answer's file; its number changes with the format.
const magic = "gpucanary-answer 1\n"

// Open is the store in dir for answers made under inputs (every input
// the answers depend on besides their reads, encoded by the caller in
// any stable way). getenv is how the variables a read asked for are
// looked at again (os.Getenv when nil). An empty dir is no store.
func Open(dir string, inputs []byte, getenv func(string) string) *Store {
	if dir == "" {
		return nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Store{dir: dir, inputs: sha256.Sum256(inputs), getenv: getenv, checker: fstrace.NewChecker(), now: time.Now}
}

// file is the file of the answer about subject (the environment's path
// and how it was found, as the caller names it).
func (s *Store) file(subject string) string {
	h := sha256.New()
	h.Write(s.inputs[:])
	h.Write([]byte(subject))
	return filepath.Join(s.dir, hex.EncodeToString(h.Sum(nil)[:12])+".answer")
}

// Get is the answer kept about subject, when one was kept under the same
// inputs and everything its read looked at still holds.
func (s *Store) Get(subject string) (Answer, bool) {
	if s == nil {
		return Answer{}, false
	}
	path := s.file(subject)
	data, err := safefs.ReadFile(path, fileLimit)
	if err != nil {
		return Answer{}, false
	}
	k, err := decode(data)
	if err != nil || k.inputs != s.inputs || k.subject != subject {
		return Answer{}, false
	}
	for name, v := range k.vars {
		if s.getenv(name) != v {
			return Answer{}, false
		}
	}
	if !s.checker.Holds(k.seen) {
		return Answer{}, false
	}
	return k.answer, true
}

// Put keeps a as the answer about subject, with what its read saw (tr),
// when tr can vouch for it (fstrace.Trace.Keepable). It says why an
// answer was not kept; failing to write one is no error of the check's,
// so it is only said.
func (s *Store) Put(subject string, tr *fstrace.Trace, a Answer) error {
	if s == nil || tr == nil {
		return nil
	}
	if ok, why := tr.Keepable(s.now()); !ok {
		return fmt.Errorf("keeping the answer about %s: %s", subject, why)
	}
	data := encode(kept{inputs: s.inputs, subject: subject, seen: tr.Seen(), vars: tr.Vars(), answer: a})
	s.swept.Do(func() { cachefiles.Daily(s.dir, s.now(), MaxAge, ".answer") })
	if err := cachefiles.Replace(s.file(subject), data, s.now()); err != nil {
		return fmt.Errorf("keeping the answer about %s: %w", subject, err)
	}
	return nil
}

// kept is an answer's file, decoded.
type kept struct {
	inputs  [sha256.Size]byte
	subject string
	seen    []fstrace.Seen
	vars    map[string]string
	answer  Answer
}

// encode writes k as magic, then lengths and numbers as varints, each
// path as the length it shares with the path before it and the rest
// (an environment's paths share most of theirs).
func encode(k kept) []byte {
	var b []byte
	b = append(b, magic...)
	b = append(b, k.inputs[:]...)
	b = appendString(b, k.subject)
	b = binary.AppendUvarint(b, uint64(len(k.seen)))
	prev := ""
	for _, s := range k.seen {
		shared := commonPrefix(prev, s.Path)
		b = append(b, byte(s.Look))
		if s.Absent {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(shared))
		b = appendString(b, s.Path[shared:])
		b = binary.AppendUvarint(b, s.Stamp.Dev)
		b = binary.AppendUvarint(b, s.Stamp.Ino)
		b = binary.AppendVarint(b, s.Stamp.Size)
		b = binary.AppendVarint(b, s.Stamp.MTime)
		b = binary.AppendVarint(b, s.Stamp.CTime)
		b = binary.AppendUvarint(b, uint64(s.Stamp.Mode))
		prev = s.Path
	}
	b = binary.AppendUvarint(b, uint64(len(k.vars)))
	for name, v := range k.vars {
		b = appendString(b, name)
		b = appendString(b, v)
	}
	b = appendString(b, k.answer.Verdict)
	b = appendString(b, string(k.answer.JSON))
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// errMalformed is a file that is not an answer of this format: a miss.
var errMalformed = errors.New("not an answer of this format")

// decoder reads encode's fields; its first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errMalformed
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errMalformed
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errMalformed
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func decode(data []byte) (kept, error) {
	var k kept
	if !bytes.HasPrefix(data, []byte(magic)) {
		return k, errMalformed
	}
	d := &decoder{b: data[len(magic):]}
	copy(k.inputs[:], d.bytes(sha256.Size))
	k.subject = d.string()
	n := d.uvarint()
	if n > uint64(len(d.b)) { // each look takes bytes: a count beyond them is a lie
		return k, errMalformed
	}
	k.seen = make([]fstrace.Seen, 0, n)
	prev := ""
	for range n {
		head := d.bytes(2)
		shared := d.uvarint()
		rest := d.string()
		if d.err != nil || shared > uint64(len(prev)) || head[1] > 1 {
			return k, errMalformed
		}
		s := fstrace.Seen{Path: prev[:shared] + rest, Look: fstrace.Look(head[0]), Absent: head[1] == 1}
		s.Stamp.Dev = d.uvarint()
		s.Stamp.Ino = d.uvarint()
		s.Stamp.Size = d.varint()
		s.Stamp.MTime = d.varint()
		s.Stamp.CTime = d.varint()
		s.Stamp.Mode = uint32(d.uvarint())
		k.seen = append(k.seen, s)
		prev = s.Path
	}
	nv := d.uvarint()
	if nv > uint64(len(d.b)) {
		return k, errMalformed
	}
	k.vars = make(map[string]string, nv)
	for range nv {
		name := d.string()
		k.vars[name] = d.string()
	}
	k.answer.Verdict = d.string()
	k.answer.JSON = d.bytes(d.uvarint())
	if d.err == nil && len(d.b) != 0 {
		d.err = errMalformed
	}
	return k, d.err
}
