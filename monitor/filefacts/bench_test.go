package filefacts

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// benchFacts is one environment's worth of facts: a few hundred files'
// (RECORDs and libraries) in one site-packages folder.
const benchFacts = 300

func benchPath(i int) string {
	return filepath.Join("/envs/e/lib/python3.11/site-packages", "pkg"+strconv.Itoa(i), "lib"+strconv.Itoa(i)+".so")
}

// putEnv puts an environment's facts.
func putEnv(s *Store) {
	for i := range benchFacts {
		s.Put("fatbin", benchPath(i), benchStamp, "k\x00libcudart.so.12\x00143\x0086 89 120\x0075 80 90")
	}
}

var benchStamp = Stamp{Dev: 2049, Ino: 123456, Size: 1 << 20, MTime: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC).UnixNano()}

// BenchmarkWarmScope: a run asking an environment's facts, all kept on
// disk: one file opened, checked and decoded, then answers from memory.
func BenchmarkWarmScope(b *testing.B) {
	dir := b.TempDir()
	s := &Store{}
	s.SetDir(dir)
	putEnv(s)
	if err := s.Flush(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r := &Store{}
		r.SetDir(dir)
		for i := range benchFacts {
			if _, ok := r.Get("fatbin", benchPath(i), benchStamp); !ok {
				b.Fatal("a fact was not kept")
			}
		}
	}
}

// BenchmarkColdScope: a run learning an environment's facts and writing
// its scope's file.
func BenchmarkColdScope(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		s := &Store{}
		s.SetDir(dir)
		putEnv(s)
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
