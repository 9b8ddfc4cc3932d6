// Package fstrace records what a read of the disk looked at: each path
// it stat'ed, listed or read, and what was there (a stamp, or nothing).
// A read's answer can then be kept (monitor/answers) and trusted later
// for as long as every one of those paths still looks the same (Valid):
// one stat a path in place of the whole read, its parsing and its
// judging. The recording is what makes that safe: a reader that looks
// at the disk other than through its Trace could change its answer
// without the kept one noticing, so the environment readers take every
// look through one (a nil *Trace only does the call).
package fstrace

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Look is how a path was looked at: its flags combine.
type Look uint8

const (
	// Follow is stat: the file the path names, links followed; what a
	// listing or a read of the path sees.
	Follow Look = 0
	// NoFollow is lstat: the path itself, a link as a link.
	NoFollow Look = 1 << 0
	// Identity asks only what is at the path (its device, inode and type;
	// a link's change time, which says it was made again), not what it
	// holds: a folder on the way to an environment, or one asked only
	// whether it is a folder, still holds when its entries change (/tmp
	// does, all the time).
	Identity Look = 1 << 1
)

// Stamp is what says a path is unchanged: its device, inode, size, mode
// and the times of its last change of content (MTime; for a folder, an
// entry added, removed or renamed) and of anything about it (CTime,
// which nobody can set back: a file edited and dated back by hand still
// has a new one). On Windows, which gives no inode or change time
// without opening the file, CTime is the creation time.
type Stamp struct {
	Dev, Ino     uint64
	Size         int64
	MTime, CTime int64
	Mode         uint32
}

// Seen is what one look at a path saw: a stamp, or nothing there.
type Seen struct {
	Path   string
	Look   Look
	Absent bool
	Stamp  Stamp
}

// Racy is how recent a stamp's modification time may be for what was
// learned from its file to be kept (an answer, a file fact). A file
// system dates a write by a clock that ticks every few milliseconds (or
// seconds), so a file written twice within one tick, at the same size
// and in place, keeps its stamp: what was learned of one that changed so
// lately may already be stale (git's "racily clean" index entries are
// the same problem). An environment's files are written at install time
// and read long after.
const Racy = 2 * time.Second

// Trace is one read's record of what it looked at. Its methods are safe
// for concurrent use; a nil *Trace records nothing.
type Trace struct {
	mu     sync.Mutex
	seen   []Seen
	index  map[lookKey]int
	vars   map[string]string
	unsure string
}

type lookKey struct {
	path string
	look Look
}

// New is an empty trace.
func New() *Trace { return &Trace{index: map[lookKey]int{}} }

// Seen is what the read looked at, each path and look once, in the order
// first looked at (the first look is the one before the read: a change
// after it shows at the next look).
func (t *Trace) Seen() []Seen {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Seen(nil), t.seen...)
}

// Vars are the environment variables the read asked for (Getenv), and
// what they said.
func (t *Trace) Vars() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.vars)
}

// Getenv is getenv, each variable asked for recorded with its value: a
// read's answer depends on some (PYTHONNOUSERSITE, PYTHONUSERBASE), as
// much as on its files. Without a trace it is getenv.
func (t *Trace) Getenv(getenv func(string) string) func(string) string {
	if t == nil {
		return getenv
	}
	return func(name string) string {
		v := getenv(name)
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.vars[name]; !ok {
			if t.vars == nil {
				t.vars = map[string]string{}
			}
			t.vars[name] = v
		}
		return v
	}
}

// Unsure says why the read's answer must not be kept ("" when it may
// be): a look failed for a reason other than absence (permission, I/O,
// no file descriptor left), so the answer may say so, and would be
// stale the moment the reason goes.
func (t *Trace) Unsure() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.unsure
}

// MarkUnsure says the read's answer must not be kept, and why; the first
// reason stays. A reader calls it for what it learns other than through
// the trace.
func (t *Trace) MarkUnsure(why string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unsure == "" {
		t.unsure = why
	}
}

// Keepable reports whether the answer of the read may be kept at now:
// nothing made it unsure, and nothing it looked at changed within Racy
// of now. It says why not.
func (t *Trace) Keepable(now time.Time) (bool, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unsure != "" {
		return false, t.unsure
	}
	limit := now.Add(-Racy).UnixNano()
	for _, s := range t.seen {
		if !s.Absent && s.Look&Identity == 0 && s.Stamp.MTime > limit {
			return false, s.Path + " changed within " + Racy.String()
		}
	}
	return true, ""
}

// note records one look at path, with what it found (fi, or err); the
// first look at a path stays.
func (t *Trace) note(path string, look Look, fi fs.FileInfo, err error) {
	if t == nil {
		return
	}
	s := Seen{Path: path, Look: look}
	switch {
	case err == nil:
		s.Stamp = reduce(look, StampOf(fi))
	case absent(err):
		s.Absent = true
	default:
		t.MarkUnsure("looking at " + path + ": " + err.Error())
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := lookKey{path, look}
	if _, ok := t.index[k]; ok {
		return
	}
	// A full look at a path says all its identity look does, when both
	// saw the same thing: one of them is looked at again, not two.
	if look&Identity != 0 {
		if i, ok := t.index[lookKey{path, look &^ Identity}]; ok && sameThing(look, t.seen[i], s) {
			return
		}
	} else if i, ok := t.index[lookKey{path, look | Identity}]; ok && sameThing(look|Identity, s, t.seen[i]) {
		delete(t.index, lookKey{path, look | Identity})
		t.index[k] = i
		t.seen[i] = s
		return
	}
	t.add(s)
}

// add records s, a look not made before; t.mu is held.
func (t *Trace) add(s Seen) {
	t.index[lookKey{s.Path, s.Look}] = len(t.seen)
	t.seen = append(t.seen, s)
}

// sameThing reports whether the full look full saw what the identity
// look id (of kind look) did.
func sameThing(look Look, full, id Seen) bool {
	return full.Absent == id.Absent && reduce(look, full.Stamp) == id.Stamp
}

// absent reports whether err says nothing is at the path: not there, or
// a component of it is not a folder.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// settled reports whether a failed read says something about the file
// that its stamp already says (too large, not a regular file, not a
// folder, on a pseudo file system, not there): its answer may be kept.
// Any other failure (permission, I/O, out of file descriptors) may go
// away with the stamp unchanged.
func settled(err error) bool {
	return err == nil || absent(err) || errors.Is(err, safefs.ErrTooLarge) ||
		errors.Is(err, safefs.ErrNotRegular) || errors.Is(err, safefs.ErrPseudoFS) ||
		errors.Is(err, safefs.ErrNotDir)
}

// after records that a read of path failed with err, when that failure
// is not one its stamp explains.
func (t *Trace) after(path string, err error) {
	if t != nil && !settled(err) {
		t.MarkUnsure("reading " + path + ": " + err.Error())
	}
}

// Stat is os.Stat, recorded.
func (t *Trace) Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	t.note(path, Follow, fi, err)
	return fi, err
}

// Lstat is os.Lstat, recorded.
func (t *Trace) Lstat(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	t.note(path, NoFollow, fi, err)
	return fi, err
}

// StatKind is os.Stat for a caller that asks only what is at path:
// whether it is there, a folder or a file (not its size, time or
// entries). It is recorded as the path's identity (Identity), so a
// folder whose entries change still holds.
func (t *Trace) StatKind(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	t.note(path, Follow|Identity, fi, err)
	return fi, err
}

// LstatKind is StatKind without following a link at path.
func (t *Trace) LstatKind(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	t.note(path, NoFollow|Identity, fi, err)
	return fi, err
}

// before stamps path ahead of reading it, so that a change during or
// after the read shows at the next look; without a trace it does
// nothing (the read itself says whether the path is there).
func (t *Trace) before(path string) {
	if t != nil {
		t.Stat(path)
	}
}

// ReadDir is safefs.ReadDir, recorded.
func (t *Trace) ReadDir(path string) ([]os.DirEntry, error) {
	t.before(path)
	ents, err := safefs.ReadDir(path)
	t.after(path, err)
	return ents, err
}

// ReadFile is safefs.ReadFile, recorded.
func (t *Trace) ReadFile(path string, limit int64) ([]byte, error) {
	t.before(path)
	data, err := safefs.ReadFile(path, limit)
	t.after(path, err)
	return data, err
}

// Open is safefs.Open, recorded: what is read of the file is the file
// as stamped when it was opened.
func (t *Trace) Open(path string) (*os.File, error) {
	t.before(path)
	f, err := safefs.Open(path)
	t.after(path, err)
	return f, err
}

// Reader is safefs.Reader, recorded.
func (t *Trace) Reader(path string) (io.ReadCloser, error) {
	t.before(path)
	r, err := safefs.Reader(path)
	t.after(path, err)
	return r, err
}

// OpenDir is safefs.OpenDir, recorded.
func (t *Trace) OpenDir(path string) (*os.File, error) {
	t.before(path)
	f, err := safefs.OpenDir(path)
	t.after(path, err)
	return f, err
}

// Readlink is os.Readlink, recorded: a link is never changed in place,
// only made again (a new inode, a new change time), so its identity
// stands for its target.
func (t *Trace) Readlink(path string) (string, error) {
	if t != nil {
		t.LstatKind(path)
	}
	target, err := os.Readlink(path)
	if t != nil && err != nil && !settled(err) && !errors.Is(err, syscall.EINVAL) {
		t.MarkUnsure("reading the link " + path + ": " + err.Error())
	}
	return target, err
}

// maxLinks bounds the links followed in recording EvalSymlinks, as the
// kernel's own limit (40) does.
const maxLinks = 40

// EvalSymlinks is filepath.EvalSymlinks, recorded: every folder and link
// on the way from path to what it names is looked at (lstat), each
// link's own path followed too, so that a link made again anywhere on
// the way shows.
func (t *Trace) EvalSymlinks(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if t != nil {
		t.walkLinks(path)
		if err != nil && !settled(err) {
			t.MarkUnsure("resolving " + path + ": " + err.Error())
		}
	}
	return real, err
}

// walkLinks lstats each component of path in turn, following the links
// it meets, as resolving it does.
func (t *Trace) walkLinks(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		t.MarkUnsure("resolving " + path + ": " + err.Error())
		return
	}
	todo := filepath.Clean(abs)
	done := filepath.VolumeName(todo) + string(filepath.Separator)
	todo = todo[len(done):]
	for hops := 0; todo != ""; {
		name, rest, _ := cutSep(todo)
		todo = rest
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			done = filepath.Dir(done)
			continue
		}
		p := filepath.Join(done, name)
		fi, err := t.LstatKind(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			if err != nil {
				return // nothing further is there to look at
			}
			done = p
			continue
		}
		if hops++; hops > maxLinks {
			return
		}
		target, err := os.Readlink(p)
		if err != nil {
			t.after(p, err)
			return
		}
		if filepath.IsAbs(target) {
			done = filepath.VolumeName(target) + string(filepath.Separator)
			target = target[len(done):]
		}
		todo = filepath.Join(target, todo)
	}
}

// cutSep splits path at its first separator.
func cutSep(path string) (first, rest string, found bool) {
	for i := 0; i < len(path); i++ {
		if os.IsPathSeparator(path[i]) {
			return path[:i], path[i+1:], true
		}
	}
	return path, "", false
}
