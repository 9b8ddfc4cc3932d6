// Package filefacts remembers small facts learned by reading a file (the
// shared libraries a RECORD lists, that a library carries no CUDA code)
// while the file is unchanged, in memory and, given a file of its own, on
// disk between runs: a check of a thousand environments then stats each
// such file instead of opening and reading it. A file is unchanged while
// its Stamp (device, inode, size, modification time) is the same; pip,
// uv and conda write a new file on every install, so a stamp that stays
// the same is a file whose answer stays the same.
//
// The disk form is a compact binary one (a thousand environments are tens
// of thousands of facts, and decoding JSON of them cost more than the
// reads they save). A missing, unreadable, malformed or older file is an
// empty store, never an error: it is a cache.
package filefacts

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Stamp is what says a file is unchanged: its device and inode (0 on
// Windows, where os.Stat gives none), size and modification time.
type Stamp struct {
	Dev, Ino    uint64
	Size, MTime int64
}

// Of is fi's stamp.
func Of(fi os.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	s.Dev, s.Ino = devIno(fi)
	return s
}

// Store holds facts by kind and path. Its zero value is an empty store in
// memory only; SetFile gives it a file to last across runs.
type Store struct {
	mu     sync.Mutex
	m      map[key]fact
	file   string
	loaded bool
	dirty  bool
	now    func() time.Time
}

type key struct{ kind, path string }

type fact struct {
	stamp Stamp
	value string
	// used is when the fact was last asked for (Unix seconds, updated at
	// most daily): one unused for Unused is dropped at Flush, so the
	// files of deleted environments do not pile up.
	used int64
}

// Shared is the process's store, the one the environment readers use.
var Shared = &Store{}

// Limits: the facts a store holds, the size of the file it loads, and how
// long a fact nobody asks for is kept.
const (
	Limit     = 200000
	fileLimit = 64 << 20
	Unused    = 30 * 24 * time.Hour
)

// SetFile makes the store last across runs in path (loaded on first use,
// written by Flush).
func (s *Store) SetFile(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.file, s.loaded = path, false
}

func (s *Store) clock() int64 {
	if s.now != nil {
		return s.now().Unix()
	}
	return time.Now().Unix()
}

// Get is the fact of kind about the file at path, when one was kept for
// the same stamp.
func (s *Store) Get(kind, path string, st Stamp) (string, bool) {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	k := key{kind, path}
	f, ok := s.m[k]
	if !ok || f.stamp != st {
		return "", false
	}
	if now-f.used > 24*3600 {
		f.used = now
		s.m[k] = f
		s.dirty = true
	}
	return f.value, true
}

// Put keeps value as the fact of kind about the file at path as of st. A
// full store keeps what it has (a fact already held is replaced).
func (s *Store) Put(kind, path string, st Stamp, value string) {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	k := key{kind, path}
	old, ok := s.m[k]
	if !ok && len(s.m) >= Limit {
		return
	}
	if ok && old.stamp == st && old.value == value {
		return
	}
	s.m[k] = fact{stamp: st, value: value, used: now}
	s.dirty = true
}

// magic starts the file; a file of another version is started again.
const magic = "gpucanary-filefacts 1\n"

// load reads the store's file once; s.mu is held.
func (s *Store) load() {
	if s.m == nil {
		s.m = map[key]fact{}
	}
	if s.loaded || s.file == "" {
		return
	}
	s.loaded = true
	data, err := readFile(s.file)
	if err != nil || !bytes.HasPrefix(data, []byte(magic)) {
		return
	}
	facts, err := decode(data[len(magic):])
	if err != nil {
		s.dirty = true // written again, whole, at Flush
	}
	for k, f := range facts {
		if len(s.m) >= Limit {
			break
		}
		if _, ok := s.m[k]; !ok {
			s.m[k] = f
		}
	}
}

// readFile reads a regular file of at most fileLimit bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > fileLimit {
		return nil, errors.New("not a regular file of a cache's size")
	}
	return io.ReadAll(io.LimitReader(f, fileLimit))
}

// decode reads records of: kind, path, value (each a length, then its
// bytes), then dev, ino, size, mtime and used (varints). It returns what
// it read before a malformed record, and the error. The strings are
// slices of one copy of data: a store of tens of thousands of facts is
// then one allocation for their text, not three per fact.
func decode(data []byte) (map[key]fact, error) {
	out := map[key]fact{}
	text := string(data)
	at := 0
	str := func() (string, bool) {
		n, w := binary.Uvarint(data[at:])
		if w <= 0 || n > uint64(len(data)-at-w) {
			return "", false
		}
		at += w
		v := text[at : at+int(n)]
		at += int(n)
		return v, true
	}
	for at < len(data) {
		kind, ok1 := str()
		path, ok2 := str()
		value, ok3 := str()
		if !ok1 || !ok2 || !ok3 {
			return out, errMalformed
		}
		var nums [5]int64
		for i := range nums {
			n, w := binary.Varint(data[at:])
			if w <= 0 {
				return out, errMalformed
			}
			nums[i], at = n, at+w
		}
		out[key{kind, path}] = fact{stamp: Stamp{Dev: uint64(nums[0]), Ino: uint64(nums[1]), Size: nums[2], MTime: nums[3]}, value: value, used: nums[4]}
	}
	return out, nil
}

var errMalformed = errors.New("malformed file facts")

// Flush writes the store to its file when it changed: a new file in the
// same folder (0600, the folder made 0700), renamed over the old one, so
// that a reader never sees half of it and two processes never mix theirs.
// Facts unused for Unused are dropped first.
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == "" || !s.dirty {
		return nil
	}
	old := s.clock() - int64(Unused/time.Second)
	var buf bytes.Buffer
	buf.WriteString(magic)
	var tmp [binary.MaxVarintLen64]byte
	str := func(v string) {
		buf.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(v)))])
		buf.WriteString(v)
	}
	for k, f := range s.m {
		if f.used < old {
			delete(s.m, k)
			continue
		}
		str(k.kind)
		str(k.path)
		str(f.value)
		for _, n := range [...]int64{int64(f.stamp.Dev), int64(f.stamp.Ino), f.stamp.Size, f.stamp.MTime, f.used} {
			buf.Write(tmp[:binary.PutVarint(tmp[:], n)])
		}
	}
	if err := writeAtomic(s.file, buf.Bytes()); err != nil {
		return fmt.Errorf("writing the file facts cache %s: %w", s.file, err)
	}
	s.dirty = false
	return nil
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".file-facts-*.tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_, werr := w.Write(data)
	ferr := w.Flush()
	cerr := f.Close()
	if err := errors.Join(werr, ferr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
