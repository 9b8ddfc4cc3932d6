package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

type testRecord struct {
	Name    string `json:"name"`
	Samples []int  `json:"samples"`
}

// TestJobRecords: a record saved is read back by its PID from another
// Store over the same folder (another process), the newest of a PID
// first; the same job saved again replaces its record; only the newest
// JobsKept are kept; a PID never saved is no record; the file is the
// user's alone.
func TestJobRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := Open(dir)
	if _, ok, err := Job[testRecord](s, 42); ok || err != nil {
		t.Fatalf("no jobs.json: ok %v, err %v", ok, err)
	}
	start := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	if err := s.SaveJob(42, start, testRecord{Name: "first run", Samples: []int{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveJob(42, start.Add(time.Hour), testRecord{Name: "PID reused", Samples: []int{3}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveJob(42, start.Add(time.Hour), testRecord{Name: "PID reused, again", Samples: []int{4}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Job[testRecord](Open(dir), 42)
	if err != nil || !ok || got.Name != "PID reused, again" || len(got.Samples) != 1 || got.Samples[0] != 4 {
		t.Fatalf("job 42 = %+v, %v, %v", got, ok, err)
	}
	for pid := 100; pid < 100+JobsKept; pid++ {
		if err := s.SaveJob(pid, start, testRecord{Name: fmt.Sprint(pid)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := Job[testRecord](Open(dir), 42); ok || err != nil {
		t.Errorf("job 42 is still kept after %d newer ones (ok %v, err %v)", JobsKept, ok, err)
	}
	last := 100 + JobsKept - 1
	if got, ok, _ := Job[testRecord](Open(dir), last); !ok || got.Name != fmt.Sprint(last) {
		t.Errorf("job %d = %+v, %v", last, got, ok)
	}
	if _, ok, _ := Job[testRecord](Open(dir), 100); !ok {
		t.Errorf("the oldest of the %d newest is not kept", JobsKept)
	}
	// Private to its user where the mode says so (Windows keeps a
	// file's access in its ACL, which the profile's folder gives).
	fi, err := os.Stat(filepath.Join(dir, "jobs.json"))
	if err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("jobs.json: %v, %v", fi, err)
	}
}

// TestJobRecordsDamaged: a jobs.json changed after it was written is
// not believed by a reader (which leaves it where it is), and the next
// save sets it aside and starts anew.
func TestJobRecordsDamaged(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	if err := s.SaveJob(7, time.Time{}, testRecord{Name: "run"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "jobs.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `"run"`, `"edited"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if string(data) == mustRead(t, path) {
		t.Fatal("the test did not change the file")
	}
	if _, ok, err := Job[testRecord](Open(dir), 7); ok || err == nil || !strings.Contains(err.Error(), "not believed") {
		t.Errorf("a damaged jobs.json: ok %v, err %v", ok, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("a reader moved the damaged file: %v", err)
	}
	if err := Open(dir).SaveJob(8, time.Time{}, testRecord{Name: "next"}); err != nil {
		t.Fatal(err)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Errorf("set aside: %v", aside)
	}
	if _, ok, _ := Job[testRecord](Open(dir), 7); ok {
		t.Error("the damaged record was carried over")
	}
	if got, ok, err := Job[testRecord](Open(dir), 8); !ok || err != nil || got.Name != "next" {
		t.Errorf("job 8 = %+v, %v, %v", got, ok, err)
	}
}

// TestJobRecordsUnreadable: a jobs.json that cannot be read (a folder
// in its place) is left as it is and not written over.
func TestJobRecordsUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "jobs.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := Open(dir).SaveJob(1, time.Time{}, testRecord{})
	if !errors.Is(err, ErrUnreadable) {
		t.Errorf("SaveJob over a folder: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "jobs.json")); err != nil || !fi.IsDir() {
		t.Errorf("jobs.json was replaced: %v, %v", fi, err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
