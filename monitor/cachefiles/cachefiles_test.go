package cachefiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReplaceAndSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	now := time.Now()
	fresh, old := filepath.Join(dir, "a.facts"), filepath.Join(dir, "b.facts")
	if err := Replace(fresh, []byte("new"), now); err != nil {
		t.Fatal(err)
	}
	if err := Replace(old, []byte("old"), now.Add(-31*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	leftover, other := filepath.Join(dir, ".c.facts-1.tmp"), filepath.Join(dir, "notes.txt")
	for _, p := range []string{leftover, other} {
		os.WriteFile(p, nil, 0o600)
		os.Chtimes(p, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder made: %v, %v", fi, err)
	}
	if err := Daily(dir, now, 30*24*time.Hour, ".facts"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{fresh: true, old: false, leftover: false, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s there: %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	if data, _ := os.ReadFile(fresh); string(data) != "new" {
		t.Errorf("a.facts = %q", data)
	}
	// once a day: an old file made now stays until tomorrow
	Replace(old, []byte("old"), now.Add(-31*24*time.Hour))
	if err := Daily(dir, now.Add(time.Hour), 30*24*time.Hour, ".facts"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Error("swept twice within a day")
	}
	if err := Daily(dir, now.Add(25*time.Hour), 30*24*time.Hour, ".facts"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("not swept the next day")
	}
}
