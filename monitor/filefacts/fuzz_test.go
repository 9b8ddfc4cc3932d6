package filefacts

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: a scope's file of any bytes (a cache another version or a
// torn write left) loads as facts or as none, never a panic, and what
// loads is written back and read again the same.
func FuzzLoad(f *testing.F) {
	good := &Store{}
	dir := f.TempDir()
	good.SetDir(dir)
	good.Put("record:libs", "/e/site-packages/x-1.dist-info/RECORD", Stamp{Dev: 1, Ino: 2, Size: 3, MTime: 4}, "x/_C.so")
	good.Put("fatbin:none", "/e/site-packages/x/_C.so", Stamp{Size: 12}, "")
	if err := good.Flush(); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(good.file("/e/site-packages"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "f.facts")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		facts, _ := load(file, "/e/site-packages")
		if len(facts) > 0 && !hasPrefix(data, magic) {
			t.Fatalf("facts from a file without the magic line: %v", facts)
		}
		s := &Store{shards: map[string]*shard{"/e/site-packages": {m: facts, dirty: true}}, n: len(facts)}
		s.dir = dir
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if len(facts) == 0 {
			return
		}
		again, err := load(s.file("/e/site-packages"), "/e/site-packages")
		if err != nil || len(again) > len(facts) {
			t.Fatalf("written back: %d facts, %v; had %d", len(again), err, len(facts))
		}
	})
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }
