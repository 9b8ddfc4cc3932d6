//go:build unix

package filefacts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/owned"
)

// nobody is the user another local user is played by: chown needs root.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: giving a file to another user (uid 65534) needs root")
	}
}

// kept is a store in dir holding one fact about a/b, flushed; it
// returns the scope's file.
func kept(t *testing.T, dir string) (file string, st Stamp) {
	t.Helper()
	s := &Store{}
	if err := s.UseDir(dir); err != nil {
		t.Fatal(err)
	}
	st = Stamp{Dev: 1, Ino: 2, Size: 3, MTime: 4, CTime: 5}
	s.Put("k", "/e/site-packages/a", st, "value-a")
	s.Put("k", "/e/site-packages/b", st, "value-b")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return s.file("/e/site-packages"), st
}

func answers(t *testing.T, dir string, st Stamp) (a, b string, ok bool) {
	t.Helper()
	s := &Store{}
	if err := s.UseDir(dir); err != nil {
		t.Fatal(err)
	}
	a, okA := s.Get("k", "/e/site-packages/a", st)
	b, okB := s.Get("k", "/e/site-packages/b", st)
	return a, b, okA || okB
}

// TestStoreChecksum: a scope's file with any one byte changed is no
// facts (not a fact with a changed value, a stamp or path that answers
// for another file).
func TestStoreChecksum(t *testing.T) {
	dir := t.TempDir()
	file, st := kept(t, dir)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if a, b, ok := answers(t, dir, st); !ok || a != "value-a" || b != "value-b" {
		t.Fatalf("the file as written: %q %q", a, b)
	}
	for i := len(magic); i < len(data); i++ {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte(nil), data...)
			bad[i] ^= flip
			if err := os.WriteFile(file, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			if a, b, ok := answers(t, dir, st); ok {
				t.Fatalf("byte %d ^ %#x: answered %q %q from a damaged file", i, flip, a, b)
			}
		}
	}
}

// TestStoreRefusesForeignFiles: in the user's own folder, a scope's file
// that another user owns, that others can write, or that is a link (to
// a good file of the user's) is no facts; the next Flush replaces it.
func TestStoreRefusesForeignFiles(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, file string)
	}{
		{"another user's", func(t *testing.T, file string) { must(t, os.Chown(file, nobody, nobody)) }},
		{"writable by others", func(t *testing.T, file string) { must(t, os.Chmod(file, 0o666)) }},
		{"writable by the group", func(t *testing.T, file string) { must(t, os.Chmod(file, 0o620)) }},
		{"a link", func(t *testing.T, file string) {
			real := filepath.Join(t.TempDir(), "real.facts")
			must(t, os.Rename(file, real))
			must(t, os.Symlink(real, file))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file, st := kept(t, dir)
			tc.plant(t, file)
			s := &Store{}
			must(t, s.UseDir(dir))
			if v, ok := s.Get("k", "/e/site-packages/a", st); ok {
				t.Fatalf("answered %q from %s", v, tc.name)
			}
			s.Put("k", "/e/site-packages/c", st, "mine")
			must(t, s.Flush())
			fi, err := os.Lstat(file)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || owner(fi) != os.Geteuid() {
				t.Fatalf("after Flush: %v %v, want the user's own 0600 file", fi, err)
			}
			if _, _, ok := answers(t, dir, st); ok {
				t.Error("the refused file's facts were written back")
			}
		})
	}
}

// TestStoreRefusesForeignFolder: a folder another user owns, or that
// others can write, or that sits in a folder others can write (not
// sticky), is not used, not changed, and not written to; UseDir says
// why, naming the folder, its owner and mode. A store in a folder of
// its own, made by UseDir, is the user's and private.
func TestStoreRefusesForeignFolder(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name, why string
		mode      os.FileMode
		uid       int
		parent    os.FileMode // of the folder above, 0: the test's own
	}{
		{"another user's", "it belongs to another user", 0o700, nobody, 0},
		{"writable by others", "other users can write it", 0o777, -1, 0},
		{"writable by the group", "other users can write it", 0o770, -1, 0},
		{"in a folder others can write", "other users can write a folder above it", 0o700, -1, 0o777},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			if tc.parent != 0 {
				base = filepath.Join(base, "shared")
				must(t, os.Mkdir(base, 0o700))
				must(t, os.Chmod(base, tc.parent))
			}
			dir := filepath.Join(base, "file-facts")
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, tc.mode))
			if tc.uid >= 0 {
				must(t, os.Chown(dir, tc.uid, tc.uid))
			}
			s := &Store{}
			err := s.UseDir(dir)
			var u *owned.Untrusted
			if !errors.As(err, &u) || !contains(u.Why, tc.why) || u.Owner == "" || u.Mode == "" {
				t.Fatalf("UseDir: %v, want it refused: %s", err, tc.why)
			}
			if !errors.Is(s.Refused(), err) {
				t.Errorf("Refused() = %v", s.Refused())
			}
			s.Put("k", "/e/site-packages/a", Stamp{Size: 1}, "v")
			if v, ok := s.Get("k", "/e/site-packages/a", Stamp{Size: 1}); !ok || v != "v" {
				t.Errorf("the store does not work in memory: %q %v", v, ok)
			}
			must(t, s.Flush())
			ents, _ := os.ReadDir(dir)
			fi, _ := os.Stat(dir)
			if len(ents) != 0 || fi.Mode().Perm() != tc.mode {
				t.Errorf("the refused folder was changed: %d files, mode %v", len(ents), fi.Mode())
			}
		})
	}
	made := filepath.Join(t.TempDir(), "a", "file-facts")
	must(t, (&Store{}).UseDir(made))
	if fi, err := os.Stat(made); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder made: %v %v, want 0700", fi, err)
	}
}

// TestStoreSeesMutation: a file rewritten at the same size with its
// modification time put back by hand has another stamp (its change time
// moved, which nobody can set back), so the fact kept of it, in memory
// and in the next run, does not answer.
func TestStoreSeesMutation(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "env", "site-packages")
	must(t, os.MkdirAll(site, 0o755))
	record := filepath.Join(site, "torch-2.5.1.dist-info", "RECORD")
	must(t, os.MkdirAll(filepath.Dir(record), 0o755))
	must(t, os.WriteFile(record, []byte("torch/lib/libtorch_cuda.so,,1\n"), 0o644))
	installed := time.Now().Add(-time.Hour).Truncate(time.Second)
	must(t, os.Chtimes(record, installed, installed))
	fi, err := os.Stat(record)
	must(t, err)
	before := Of(fi)

	s := &Store{}
	must(t, s.UseDir(filepath.Join(dir, "cache")))
	s.Put("record:libs", record, before, "torch/lib/libtorch_cuda.so")
	must(t, s.Flush())

	time.Sleep(20 * time.Millisecond) // past the clock tick the change time was taken at
	must(t, os.WriteFile(record, []byte("torch/lib/libtorch_cpu.so,,1\n "), 0o644))
	must(t, os.Truncate(record, fi.Size()))
	must(t, os.Chtimes(record, installed, installed))
	fi2, err := os.Stat(record)
	must(t, err)
	if fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the rewrite is not at the same size and time: %d %v, was %d %v", fi2.Size(), fi2.ModTime(), fi.Size(), fi.ModTime())
	}
	after := Of(fi2)
	if after == before {
		t.Fatalf("the stamp did not see the rewrite: %+v", after)
	}
	if v, ok := s.Get("record:libs", record, after); ok {
		t.Errorf("this run answered %q for the rewritten file", v)
	}
	next := &Store{}
	must(t, next.UseDir(filepath.Join(dir, "cache")))
	if v, ok := next.Get("record:libs", record, after); ok {
		t.Errorf("the next run answered %q for the rewritten file", v)
	}
	if _, ok := next.Get("record:libs", record, before); !ok {
		t.Error("the next run lost the fact itself")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func owner(fi fs.FileInfo) int { return int(fi.Sys().(*syscall.Stat_t).Uid) }
