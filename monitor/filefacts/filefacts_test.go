package filefacts

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestStore: a fact is answered for the stamp it was kept with only; it
// lasts across runs through the file; a changed file (another stamp)
// gets no answer; an unused fact is dropped at Flush.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libx.so")
	if err := os.WriteFile(lib, []byte("\x7fELF one"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(lib)
	if err != nil {
		t.Fatal(err)
	}
	st := Of(fi)
	file := filepath.Join(dir, "cache", "facts.bin")
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	s := &Store{now: clock}
	s.SetFile(file)
	if _, ok := s.Get("k", lib, st); ok {
		t.Fatal("an empty store answered")
	}
	s.Put("k", lib, st, "a\x00b")
	s.Put("other", lib, st, "")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}

	s2 := &Store{now: clock}
	s2.SetFile(file)
	if v, ok := s2.Get("k", lib, st); !ok || v != "a\x00b" {
		t.Errorf("after a run: %q, %v; want the kept fact", v, ok)
	}
	if v, ok := s2.Get("other", lib, st); !ok || v != "" {
		t.Errorf("an empty fact after a run: %q, %v", v, ok)
	}
	if _, ok := s2.Get("k", filepath.Join(dir, "liby.so"), st); ok {
		t.Error("another path answered")
	}
	changed := st
	changed.MTime++
	if _, ok := s2.Get("k", lib, changed); ok {
		t.Error("a changed file answered with its old fact")
	}

	// Unused for longer than Unused: gone after the next Flush.
	later := now.Add(Unused + 48*time.Hour)
	s3 := &Store{now: func() time.Time { return later }}
	s3.SetFile(file)
	s3.Put("new", lib, st, "n")
	if err := s3.Flush(); err != nil {
		t.Fatal(err)
	}
	s4 := &Store{now: func() time.Time { return later }}
	s4.SetFile(file)
	if _, ok := s4.Get("k", lib, st); ok {
		t.Error("a fact unused for longer than Unused was kept")
	}
	if v, ok := s4.Get("new", lib, st); !ok || v != "n" {
		t.Errorf("the fact put since: %q, %v", v, ok)
	}
}

// TestStoreBadFile: a malformed, truncated or foreign file is an empty
// store (what was read before a bad record is kept), never an error.
func TestStoreBadFile(t *testing.T) {
	dir := t.TempDir()
	st := Stamp{Dev: 1, Ino: 2, Size: 3, MTime: 4}
	good := &Store{}
	good.SetFile(filepath.Join(dir, "good"))
	good.Put("k", "/a", st, "va")
	good.Put("k", "/b", st, "vb")
	if err := good.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "good"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"foreign":   []byte(`{"version": 1}`),
		"truncated": data[:len(data)-3],
		"huge-len":  append([]byte(magic), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"empty":     {},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		s := &Store{}
		s.SetFile(p)
		_, okA := s.Get("k", "/a", st)
		_, okB := s.Get("k", "/b", st)
		if okB {
			t.Errorf("%s: a fact from a bad file was answered", name)
		}
		if name != "truncated" && okA {
			t.Errorf("%s: answered /a", name)
		}
		s.Put("k", "/c", st, "vc")
		if err := s.Flush(); err != nil {
			t.Errorf("%s: Flush over a bad file: %v", name, err)
		}
	}
}

// TestStoreLimit: a full store keeps what it has and replaces what it
// holds.
func TestStoreLimit(t *testing.T) {
	s := &Store{m: map[key]fact{}}
	for i := range Limit {
		s.m[key{"k", strconv.Itoa(i)}] = fact{}
	}
	st := Stamp{Size: 1}
	s.Put("k", "/new", st, "v")
	if _, ok := s.Get("k", "/new", st); ok {
		t.Error("a full store took a new fact")
	}
	s.Put("k", "0", st, "v")
	if v, ok := s.Get("k", "0", st); !ok || v != "v" {
		t.Errorf("a full store did not replace a fact it held: %q, %v", v, ok)
	}
}
