package filefacts

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestScope: the facts of an environment's files share its site-packages
// folder's file; a path outside one shares its folder's.
func TestScope(t *testing.T) {
	sep := string(filepath.Separator)
	j := func(parts ...string) string { return sep + filepath.Join(parts...) }
	for _, tc := range []struct{ path, want string }{
		{j("e", "lib", "python3.11", "site-packages", "torch-2.5.1.dist-info", "RECORD"), j("e", "lib", "python3.11", "site-packages")},
		{j("e", "lib", "python3.11", "site-packages", "torch", "lib", "libc10.so"), j("e", "lib", "python3.11", "site-packages")},
		{j("e", "Lib", "Site-Packages", "x.dll"), j("e", "Lib", "Site-Packages")},
		{j("e", "my-site-packages-2", "x.so"), j("e", "my-site-packages-2")},
		{j("e", "my-site-packages-2", "site-packages", "x.so"), j("e", "my-site-packages-2", "site-packages")},
		{j("usr", "lib", "x86_64-linux-gnu", "libcudart.so.12"), j("usr", "lib", "x86_64-linux-gnu")},
	} {
		if got := Scope(tc.path); got != tc.want {
			t.Errorf("Scope(%s) = %s, want %s", tc.path, got, tc.want)
		}
	}
}

// TestStore: a fact is answered for the stamp it was kept with only; it
// lasts across runs through its scope's file; a changed file (another
// stamp) gets no answer; an unused fact is dropped at Flush, and a scope
// left without facts has no file.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "env", "site-packages")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(site, "libx.so")
	if err := os.WriteFile(lib, []byte("\x7fELF one"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	installed := now.Add(-time.Hour)
	if err := os.Chtimes(lib, installed, installed); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(lib)
	if err != nil {
		t.Fatal(err)
	}
	st := Of(fi)
	facts := filepath.Join(dir, "cache")
	clock := func() time.Time { return now }

	s := &Store{now: clock}
	s.SetDir(facts)
	if _, ok := s.Get("k", lib, st); ok {
		t.Fatal("an empty store answered")
	}
	s.Put("k", lib, st, "a\x00b")
	s.Put("other", lib, st, "")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.file(site)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the scope's file: %v %v, want mode 0600", fi, err)
	}

	s2 := &Store{now: clock}
	s2.SetDir(facts)
	if v, ok := s2.Get("k", lib, st); !ok || v != "a\x00b" {
		t.Errorf("after a run: %q, %v; want the kept fact", v, ok)
	}
	if v, ok := s2.Get("other", lib, st); !ok || v != "" {
		t.Errorf("an empty fact after a run: %q, %v", v, ok)
	}
	if _, ok := s2.Get("k", filepath.Join(site, "liby.so"), st); ok {
		t.Error("another path answered")
	}
	changed := st
	changed.MTime++
	if _, ok := s2.Get("k", lib, changed); ok {
		t.Error("a changed file answered with its old fact")
	}

	// Unused for longer than Unused: gone after the next Flush, and the
	// scope's file with them.
	later := now.Add(Unused + 48*time.Hour)
	s3 := &Store{now: func() time.Time { return later }}
	s3.SetDir(facts)
	s3.Put("new", filepath.Join(dir, "elsewhere", "f"), st, "n")
	s3.Get("nothing", lib, st) // loads the old scope, whose facts are all old
	s3.shards[site].dirty = true
	if err := s3.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s3.file(site)); !os.IsNotExist(err) {
		t.Errorf("a scope without facts kept its file: %v", err)
	}
	s4 := &Store{now: func() time.Time { return later }}
	s4.SetDir(facts)
	if _, ok := s4.Get("k", lib, st); ok {
		t.Error("a fact unused for longer than Unused was kept")
	}
	if v, ok := s4.Get("new", filepath.Join(dir, "elsewhere", "f"), st); !ok || v != "n" {
		t.Errorf("the fact put since: %q, %v", v, ok)
	}
}

// TestStoreLoadsItsScopes: a run reads the files of the scopes it asks
// about only.
func TestStoreLoadsItsScopes(t *testing.T) {
	facts := t.TempDir()
	st := Stamp{Size: 1}
	s := &Store{}
	s.SetDir(facts)
	for i := range 50 {
		s.Put("k", filepath.Join("/envs", strconv.Itoa(i), "site-packages", "RECORD"), st, "v")
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s2 := &Store{}
	s2.SetDir(facts)
	if v, ok := s2.Get("k", filepath.Join("/envs", "7", "site-packages", "RECORD"), st); !ok || v != "v" {
		t.Fatalf("%q, %v", v, ok)
	}
	if len(s2.shards) != 1 || s2.n != 1 {
		t.Errorf("one environment's fact loaded %d scopes, %d facts; want 1, 1", len(s2.shards), s2.n)
	}
}

// TestStoreBadFile: a malformed, truncated, foreign or other scope's file
// is no facts (what was read before a bad record is kept), never an
// error, and is written again at Flush.
func TestStoreBadFile(t *testing.T) {
	dir := t.TempDir()
	st := Stamp{Dev: 1, Ino: 2, Size: 3, MTime: 4}
	a, b := "/s/site-packages/a", "/s/site-packages/b"
	good := &Store{}
	good.SetDir(dir)
	good.Put("k", a, st, "va")
	good.Put("k", b, st, "vb")
	if err := good.Flush(); err != nil {
		t.Fatal(err)
	}
	file := good.file(Scope(a))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	other := &Store{}
	other.SetDir(t.TempDir())
	other.Put("k", "/t/site-packages/a", st, "vt")
	if err := other.Flush(); err != nil {
		t.Fatal(err)
	}
	otherData, err := os.ReadFile(other.file("/t/site-packages"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"foreign":     []byte(`{"version": 1}`),
		"older":       []byte("gpucanary-filefacts 1\n"),
		"truncated":   data[:len(data)-3],
		"huge-len":    append([]byte(magic), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"empty":       {},
		"other scope": otherData,
	} {
		if err := os.WriteFile(file, content, 0o600); err != nil {
			t.Fatal(err)
		}
		s := &Store{}
		s.SetDir(dir)
		_, okA := s.Get("k", a, st)
		_, okB := s.Get("k", b, st)
		if okA && okB {
			t.Errorf("%s: both facts answered from a bad file", name)
		}
		if v, ok := s.Get("k", "/t/site-packages/a", st); ok {
			t.Errorf("%s: another scope's fact answered: %q", name, v)
		}
		s.Put("k", "/s/site-packages/c", st, "vc")
		if err := s.Flush(); err != nil {
			t.Errorf("%s: Flush over a bad file: %v", name, err)
		}
		s2 := &Store{}
		s2.SetDir(dir)
		if v, ok := s2.Get("k", "/s/site-packages/c", st); !ok || v != "vc" {
			t.Errorf("%s: the file written again: %q, %v", name, v, ok)
		}
	}
}

// TestStoreLimit: a full store keeps what it has and replaces what it
// holds.
func TestStoreLimit(t *testing.T) {
	s := &Store{}
	st := Stamp{Size: 1}
	for i := range Limit {
		s.Put("k", "/d/"+strconv.Itoa(i), st, "")
	}
	s.Put("k", "/d/new", st, "v")
	if _, ok := s.Get("k", "/d/new", st); ok {
		t.Error("a full store took a new fact")
	}
	s.Put("k", "/d/0", st, "v")
	if v, ok := s.Get("k", "/d/0", st); !ok || v != "v" {
		t.Errorf("a full store did not replace a fact it held: %q, %v", v, ok)
	}
}

// TestSweep: Flush sweeps once a day, removing the files of scopes no
// run has written for Unused (deleted environments').
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := &Store{now: func() time.Time { return now }}
	s.SetDir(dir)
	st := Stamp{Size: 1}
	s.Put("k", "/gone/site-packages/x", st, "v")
	s.Put("k", "/kept/site-packages/x", st, "v")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	gone, kept := s.file("/gone/site-packages"), s.file("/kept/site-packages")
	old := now.Add(-Unused - time.Hour)
	os.Chtimes(gone, old, old)
	// A sweep was made at the first Flush: not again the same day.
	s.Put("k", "/kept/site-packages/y", st, "v")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); err != nil {
		t.Fatalf("swept twice in a day: %v", err)
	}
	now = now.Add(25 * time.Hour)
	s.Put("k", "/kept/site-packages/z", st, "v")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("a file unwritten for longer than Unused was kept: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a file in use was swept: %v", err)
	}
}

// TestStoreLetsScopesGo: a store with a folder holds at most maxShards
// scopes in memory; the least recently used one is written and let go,
// and its facts are there again from its file when asked for.
func TestStoreLetsScopesGo(t *testing.T) {
	s := &Store{}
	s.SetDir(t.TempDir())
	st := Stamp{Size: 1}
	path := func(i int) string { return filepath.Join("/envs", strconv.Itoa(i), "site-packages", "RECORD") }
	for i := range 3 * maxShards {
		s.Put("k", path(i), st, strconv.Itoa(i))
		if i > 0 {
			s.Get("k", path(0), st) // scope 0 stays in use
		}
	}
	if len(s.shards) > maxShards {
		t.Errorf("%d scopes held, want at most %d", len(s.shards), maxShards)
	}
	if _, ok := s.shards[Scope(path(0))]; !ok {
		t.Error("the scope in use was let go")
	}
	if s.n != len(s.shards) {
		t.Errorf("counted %d facts for %d scopes of one fact each", s.n, len(s.shards))
	}
	for _, i := range []int{0, 1, 3*maxShards - 1} {
		if v, ok := s.Get("k", path(i), st); !ok || v != strconv.Itoa(i) {
			t.Errorf("fact %d after its scope was let go: %q, %v", i, v, ok)
		}
	}
	// Without a folder nothing is let go (there would be nowhere to
	// read it back from).
	m := &Store{}
	for i := range 2 * maxShards {
		m.Put("k", path(i), st, "v")
	}
	if len(m.shards) != 2*maxShards {
		t.Errorf("a store in memory held %d scopes, want all %d", len(m.shards), 2*maxShards)
	}
}

// TestStoreRacy: a file changed within Racy of now gets no fact (it may
// change again within the same stamp); one changed before, does.
func TestStoreRacy(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := &Store{now: func() time.Time { return now }}
	fresh := Stamp{Size: 5, MTime: now.Add(-Racy / 2).UnixNano()}
	settled := Stamp{Size: 5, MTime: now.Add(-2 * Racy).UnixNano()}
	s.Put("k", "/s/site-packages/fresh", fresh, "v")
	s.Put("k", "/s/site-packages/settled", settled, "v")
	if _, ok := s.Get("k", "/s/site-packages/fresh", fresh); ok {
		t.Error("a file changed within Racy was kept a fact of")
	}
	if _, ok := s.Get("k", "/s/site-packages/settled", settled); !ok {
		t.Error("a file changed before Racy got no fact")
	}
}
