// Package filefacts remembers small facts learned by reading a file (the
// shared libraries a RECORD lists, the CUDA kernels a library carries or
// that it carries none) while the file is unchanged, in memory and, given
// a folder of its own, on disk between runs: a check of a thousand
// environments then stats each such file instead of opening and reading
// it, and a 159 MB CUDA library's headers are read once. A file is
// unchanged while its Stamp (device, inode, size, modification and
// change times) is the same; pip, uv and conda write a new file on every
// install, so a stamp that stays the same is a file whose answer stays
// the same.
//
// On disk the facts are kept in one file per scope: the site-packages
// folder a path is in, else the path's folder (Scope). A run loads the
// facts of the environments it reads, not those of every environment
// ever read: a check of one environment stays as cheap as one. The files
// are a compact binary form (a thousand environments are tens of
// thousands of facts, and decoding JSON of them cost more than the reads
// they save), checked whole by a CRC-32C.
//
// What another local user could have written is not believed: the store
// uses a folder only when it is the user's own and no one else can write
// it or a folder above it (owned.Check), and a file in it only when it
// is the user's, not a link and not writable by others. A missing,
// unreadable, malformed, damaged or foreign file is no facts, never an
// error: it is a cache.
package filefacts

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/gpucanary/gpucanary/monitor/cachefiles"
	"github.com/gpucanary/gpucanary/monitor/owned"
)

// Stamp is what says a file is unchanged: its device and inode (0 on
// Windows, where os.Stat gives none), size, modification time and the
// time of its last change of any kind (CTime, which nobody can set back:
// a file rewritten at the same size and dated back by hand still has a
// new one; the creation time on Windows).
type Stamp struct {
	Dev, Ino           uint64
	Size, MTime, CTime int64
}

// Store holds facts by kind and path. Its zero value keeps them in memory
// only; SetDir gives it a folder to keep them in across runs.
type Store struct {
	mu     sync.Mutex
	shards map[string]*shard // by scope
	n      int               // facts held, all shards
	tick   uint64            // counts shard uses, for the least recently used
	dir    string
	now    func() time.Time
	// refused is why the folder last given was not used (an
	// *owned.Untrusted, or the error met making or checking it).
	refused error
}

// shard is one scope's facts, as its file had them and as changed since.
type shard struct {
	m     map[key]fact
	dirty bool
	used  uint64 // the store's tick when last used
}

// maxShards is how many scopes' facts a store with a folder holds in
// memory: a run reads an environment's facts together, once, so the
// least recently used scope is written (when changed) and let go to make
// room, and a check of a thousand environments holds a few of them, not
// all.
const maxShards = 64

type key struct{ kind, path string }

type fact struct {
	stamp Stamp
	value string
	// used is when the fact was last asked for (Unix seconds, updated at
	// most daily): one unused for Unused is dropped at Flush, so the
	// facts of deleted environments do not pile up.
	used int64
}

// Limits: the facts a store holds in memory, the size of one scope's
// file, and how long a fact (or a scope's file) nobody uses is kept.
const (
	Limit     = 200000
	fileLimit = 16 << 20
	Unused    = 30 * 24 * time.Hour
)

// SetDir is UseDir for a caller with no one to tell that the folder was
// refused (Refused still says so).
func (s *Store) SetDir(dir string) { s.UseDir(dir) }

// UseDir makes the store last across runs in the folder dir (each
// scope's file loaded on first use, written by Flush), made 0700 when
// missing. A folder that another user owns or can write, or that sits
// in a folder another user can replace it from, is not used (and not
// changed: its owner may have reasons); the store keeps its facts in
// memory only and the error, an *owned.Untrusted, says what is wrong.
func (s *Store) UseDir(dir string) error {
	err := trustedDir(dir)
	if err != nil && !isUntrusted(err) {
		err = fmt.Errorf("keeping file facts in %s: %w", dir, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shards, s.n, s.refused = nil, 0, err
	s.dir = dir
	if err != nil {
		s.dir = ""
	}
	return err
}

// Refused is why the folder given to UseDir or SetDir is not used, or nil.
func (s *Store) Refused() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// trustedDir makes dir (0700) when it is missing and checks it: the
// folder it is made in is checked first, so that nothing is made in a
// folder another user could have planted.
func trustedDir(dir string) error {
	made := dir
	for {
		if _, err := os.Lstat(made); err == nil || !errors.Is(err, os.ErrNotExist) {
			break
		}
		up := filepath.Dir(made)
		if up == made {
			break
		}
		made = up
	}
	if made != dir {
		if err := owned.CanMakeIn(made); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	return owned.Check(dir, owned.Policy{})
}

func isUntrusted(err error) bool {
	var u *owned.Untrusted
	return errors.As(err, &u)
}

func (s *Store) clock() int64 { return s.instant().Unix() }

func (s *Store) instant() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// Racy is how recent a file's modification time may be for a fact about
// it to be kept. A file system dates a write by a clock that ticks every
// few milliseconds (or seconds), so a file written twice within one tick,
// at the same size and in place, keeps its stamp: what was learned of one
// that changed so lately may already be stale (git's "racily clean" index
// entries are the same problem). An environment's files are written at
// install time and read long after.
const Racy = 2 * time.Second

// Scope is the part of path whose facts share a file: the path up to its
// site-packages folder (any case: Lib\site-packages on Windows), else its
// folder.
func Scope(path string) string {
	rest := path
	for {
		i := strings.Index(strings.ToLower(rest), "site-packages")
		if i < 0 {
			return filepath.Dir(path)
		}
		end := len(path) - len(rest) + i + len("site-packages")
		atStart := i == 0 || os.IsPathSeparator(rest[i-1])
		atEnd := end == len(path) || os.IsPathSeparator(path[end])
		if atStart && atEnd {
			return path[:end]
		}
		rest = rest[i+len("site-packages"):]
	}
}

// shard is path's scope's shard, loaded from its file on first use; s.mu
// is held.
func (s *Store) shard(path string) *shard {
	scope := Scope(path)
	s.tick++
	if sh, ok := s.shards[scope]; ok {
		sh.used = s.tick
		return sh
	}
	if s.shards == nil {
		s.shards = map[string]*shard{}
	}
	if s.dir != "" && len(s.shards) >= maxShards {
		s.evict()
	}
	sh := &shard{m: map[key]fact{}, used: s.tick}
	s.shards[scope] = sh
	if s.dir == "" {
		return sh
	}
	facts, err := load(s.file(scope), scope)
	if err != nil {
		sh.dirty = true // written again, whole, at Flush
	}
	if s.n+len(facts) <= Limit {
		// the file's map is the shard's: not built a second time
		if facts != nil {
			sh.m = facts
		}
		s.n += len(facts)
		return sh
	}
	for k, f := range facts {
		if s.n >= Limit {
			break
		}
		sh.m[k] = f
		s.n++
	}
	return sh
}

// evict writes the least recently used scope's facts when they changed
// and lets them go; s.mu is held. One that cannot be written is kept.
func (s *Store) evict() {
	var oldest string
	var at uint64
	for scope, sh := range s.shards {
		if oldest == "" || sh.used < at {
			oldest, at = scope, sh.used
		}
	}
	sh := s.shards[oldest]
	if sh.dirty && s.write(oldest, sh) != nil {
		return
	}
	s.n -= len(sh.m)
	delete(s.shards, oldest)
}

// file is the file of a scope's facts.
func (s *Store) file(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:12])+".facts")
}

// Get is the fact of kind about the file at path, when one was kept for
// the same stamp.
func (s *Store) Get(kind, path string, st Stamp) (string, bool) {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shard(path)
	k := key{kind, path}
	f, ok := sh.m[k]
	if !ok || f.stamp != st {
		return "", false
	}
	if now-f.used > 24*3600 {
		f.used = now
		sh.m[k] = f
		sh.dirty = true
	}
	return f.value, true
}

// Put keeps value as the fact of kind about the file at path as of st. A
// full store keeps what it has (a fact already held is replaced), and a
// file changed within Racy of now is not the subject of a fact.
func (s *Store) Put(kind, path string, st Stamp, value string) {
	at := s.instant()
	if st.MTime > at.Add(-Racy).UnixNano() {
		return // racy: it may change again within its stamp
	}
	now := at.Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shard(path)
	k := key{kind, path}
	old, ok := sh.m[k]
	if !ok && s.n >= Limit {
		return
	}
	if ok && old.stamp == st && old.value == value {
		return
	}
	if !ok {
		s.n++
	}
	sh.m[k] = fact{stamp: st, value: value, used: now}
	sh.dirty = true
}

// magic starts a file; a file of another version is no facts.
const magic = "gpucanary-filefacts 4\n"

// castagnoli is CRC-32C's table: a file's last four bytes are the
// checksum of all before them, so that a torn write, a flipped bit or an
// edit by hand is no facts rather than a wrong one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// load reads the facts in file, which must be scope's.
func load(file, scope string) (map[key]fact, error) {
	data, err := readFile(file, fileLimit)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if len(data) < len(magic)+crc32.Size || string(data[:len(magic)]) != magic {
		return nil, errMalformed
	}
	body := data[:len(data)-crc32.Size]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, errDamaged
	}
	// The text is the bytes just read, never written again: a string
	// over them, not a second copy of the file.
	d := decoder{text: unsafe.String(unsafe.SliceData(body), len(body)), at: len(magic)}
	if got, ok := d.str(); !ok || got != scope {
		return nil, errMalformed // another scope's (a hash collision) or cut short
	}
	return d.facts()
}

// decoder reads a file's records: kind, path, value (each a length, then
// its bytes), then dev, ino, size, mtime and used (varints). The strings
// are slices of the file's one copy: tens of thousands of facts are then
// one allocation for their text, not three each.
type decoder struct {
	text string
	at   int
}

func (d *decoder) uvarint() (uint64, bool) {
	var v uint64
	for shift := 0; shift < 64 && d.at < len(d.text); shift += 7 {
		c := d.text[d.at]
		d.at++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, true
		}
	}
	return 0, false
}

func (d *decoder) varint() (int64, bool) {
	u, ok := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v, ok
}

func (d *decoder) str() (string, bool) {
	n, ok := d.uvarint()
	if !ok || n > uint64(len(d.text)-d.at) {
		return "", false
	}
	v := d.text[d.at : d.at+int(n)]
	d.at += int(n)
	return v, true
}

// facts reads records to the end; what was read before a malformed one
// is returned with the error.
func (d *decoder) facts() (map[key]fact, error) {
	// Records are 150 to 250 bytes: sized so that the map is not grown
	// (and rehashed) while it is filled.
	out := make(map[key]fact, (len(d.text)-d.at)/128)
	for d.at < len(d.text) {
		kind, ok1 := d.str()
		path, ok2 := d.str()
		value, ok3 := d.str()
		if !ok1 || !ok2 || !ok3 {
			return out, errMalformed
		}
		var nums [6]int64
		for i := range nums {
			var ok bool
			if nums[i], ok = d.varint(); !ok {
				return out, errMalformed
			}
		}
		out[key{kind, path}] = fact{stamp: Stamp{Dev: uint64(nums[0]), Ino: uint64(nums[1]), Size: nums[2], MTime: nums[3], CTime: nums[4]}, value: value, used: nums[5]}
	}
	return out, nil
}

var (
	errMalformed = errors.New("malformed file facts")
	errDamaged   = errors.New("file facts fail their checksum")
)

// readFile reads the store's file at path, of at most limit bytes, when
// it is one the store may believe (openOwned).
func readFile(path string, limit int64) ([]byte, error) {
	f, err := openOwned(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size() > limit {
		return nil, errMalformed
	}
	buf := make([]byte, f.Size())
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return buf[:n], nil
}

// Flush writes each scope whose facts changed to its file: a new file in
// the folder (0600, the folder made 0700), renamed over the old one, so
// that a reader never sees half of one and two processes never mix
// theirs. Facts unused for Unused are dropped first; a scope left with
// none has its file removed. The first error is returned, after the
// other scopes are written.
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	var first error
	for scope, sh := range s.shards {
		if !sh.dirty {
			continue
		}
		if err := s.write(scope, sh); err != nil {
			first = cmpOr(first, err)
		}
	}
	if err := s.sweepDaily(); err != nil {
		first = cmpOr(first, err)
	}
	return first
}

// write writes a scope's facts to its file, dropping those unused for
// Unused first (and the file, when none is left); s.mu is held.
func (s *Store) write(scope string, sh *shard) error {
	old := s.clock() - int64(Unused/time.Second)
	var buf []byte
	buf = append(buf, magic...)
	buf = appendStr(buf, scope)
	kept := 0
	for k, f := range sh.m {
		if f.used < old {
			delete(sh.m, k)
			s.n--
			continue
		}
		kept++
		buf = appendStr(buf, k.kind)
		buf = appendStr(buf, k.path)
		buf = appendStr(buf, f.value)
		for _, n := range [...]int64{int64(f.stamp.Dev), int64(f.stamp.Ino), f.stamp.Size, f.stamp.MTime, f.stamp.CTime, f.used} {
			buf = binary.AppendVarint(buf, n)
		}
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
	var err error
	if kept == 0 {
		if err = os.Remove(s.file(scope)); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	} else {
		err = cachefiles.Replace(s.file(scope), buf, time.Unix(s.clock(), 0))
	}
	if err != nil {
		return fmt.Errorf("writing the file facts of %s: %w", scope, err)
	}
	sh.dirty = false
	return nil
}

// sweepDaily sweeps the folder (cachefiles.Daily): the files no run has
// written for Unused (the facts of environments deleted since) go; a
// file is written again whenever a fact in it is first used on a day.
func (s *Store) sweepDaily() error {
	return cachefiles.Daily(s.dir, time.Unix(s.clock(), 0), Unused, ".facts")
}

func appendStr(buf []byte, v string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(v)))
	return append(buf, v...)
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
