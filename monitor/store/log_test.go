package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type numbered struct {
	N    int    `json:"n"`
	Note string `json:"note,omitempty"`
}

// appendN appends the events from..to-1, a hundred an Append (each
// Append syncs once).
func appendN(t testing.TB, s *Store, from, to int) {
	t.Helper()
	for i := from; i < to; i += 100 {
		var batch []any
		for j := i; j < min(i+100, to); j++ {
			batch = append(batch, numbered{N: j})
		}
		if err := s.Append(batch...); err != nil {
			t.Fatal(err)
		}
	}
}

// newest reads the history and checks it is to-1, to-2, … down to from.
func checkNewest(t *testing.T, s *Store, limit, from, to int) {
	t.Helper()
	got, read, err := History[numbered](s, limit)
	if err != nil || read.Damaged != 0 {
		t.Fatalf("History: %v, %+v", err, read)
	}
	if len(got) != to-from {
		t.Fatalf("History gave %d events, want %d (%d..%d)", len(got), to-from, from, to-1)
	}
	for i, e := range got {
		if e.N != to-1-i {
			t.Fatalf("event %d is %d, want %d", i, e.N, to-1-i)
		}
	}
}

// TestOldHistoryIsMigrated: the history of the version before the log
// (events.json, one indented document) is read as it is until the first
// Append, which turns it into history.jsonl, once, keeping every event,
// and removes it.
func TestOldHistoryIsMigrated(t *testing.T) {
	dir := t.TempDir()
	var old struct {
		Format string     `json:"format"`
		Events []numbered `json:"events"`
	}
	old.Format = format
	for i := range 3 {
		old.Events = append(old.Events, numbered{N: i, Note: "line one\nline two"})
	}
	data, _ := json.MarshalIndent(old, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "events.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	// A reader (report, beside the engine) reads it and moves nothing.
	checkNewest(t, Open(dir), 10, 0, 3)
	if _, err := os.Stat(filepath.Join(dir, "events.json")); err != nil {
		t.Fatalf("a read moved the old history: %v", err)
	}

	s := Open(dir)
	appendN(t, s, 3, 4)
	if _, err := os.Stat(filepath.Join(dir, "events.json")); !os.IsNotExist(err) {
		t.Errorf("events.json is still there after the migration (%v)", err)
	}
	checkNewest(t, Open(dir), 10, 0, 4)
	got, _, _ := History[numbered](Open(dir), 10)
	if got[3].Note != "line one\nline two" {
		t.Errorf("a migrated event lost its text: %+v", got[3])
	}
	// Once: a second store appends to the log, migrating nothing again.
	appendN(t, Open(dir), 4, 5)
	checkNewest(t, Open(dir), 10, 0, 5)
	data, _ = os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if n := bytes.Count(data, []byte{'\n'}); n != 5 {
		t.Errorf("history.jsonl has %d lines, want 5:\n%s", n, data)
	}
}

// TestDamagedLinesAreSkipped: a line changed by a byte, a line that is
// not GPU Canary's, one longer than a line may be and a last line cut
// short are skipped and counted, never fatal; the history's other events
// are read, and the next Append starts on a line of its own.
func TestDamagedLinesAreSkipped(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	appendN(t, s, 0, 5)
	p := filepath.Join(dir, "history.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// Event 1: "n":1 becomes "n":7, valid JSON whose checksum fails.
	lines[1] = strings.Replace(lines[1], `"n":1`, `"n":7`, 1)
	damaged := strings.Join(lines[:5], "") +
		`{"kind":"ENV_ADDED","message":"\u001b]0;pwned\u0007"}` + "\n" +
		`{"crc32c":"00000000","event":` + strings.Repeat("x", maxLine+10) + "}\n" +
		`{"crc32c":"12345678","event":{"n":`
	if err := os.WriteFile(p, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	got, read, err := History[numbered](Open(dir), 10)
	if err != nil {
		t.Fatal(err)
	}
	if read.Damaged != 3 || len(got) != 4 || got[0].N != 4 || got[3].N != 0 {
		t.Fatalf("History = %+v, %+v; want events 4, 3, 2, 0 and 3 damaged lines (the one being written is not one)", got, read)
	}
	// A new store finishes the cut line, so its own is whole.
	appendN(t, Open(dir), 5, 6)
	got, read, _ = History[numbered](Open(dir), 10)
	if read.Damaged != 4 || len(got) != 5 || got[0].N != 5 {
		t.Fatalf("after an Append: %+v, %+v; want 5 first and 4 damaged lines", got, read)
	}
}

// TestHistoryReadsOnlyWhatItReturns: a limit is honoured from the end,
// across the turn-over, and a limit of zero reads nothing.
func TestLogTurnsOver(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	appendN(t, s, 0, segmentEvents+10)
	checkNewest(t, s, 5, segmentEvents+5, segmentEvents+10)
	checkNewest(t, s, 2*segmentEvents, 0, segmentEvents+10)
	for f, want := range map[string]int{"history.jsonl": 10, "history.1.jsonl": segmentEvents} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(data, []byte{'\n'}); n != want {
			t.Errorf("%s has %d lines, want %d", f, n, want)
		}
	}
	// A store that did not write the log counts it before going on.
	appendN(t, Open(dir), segmentEvents+10, 2*segmentEvents+1)
	checkNewest(t, Open(dir), 3*segmentEvents, segmentEvents, 2*segmentEvents+1)
	if got, _, _ := History[numbered](s, 0); len(got) != 0 {
		t.Errorf("a limit of 0 gave %d events", len(got))
	}
}

// TestLogTurnsOverBySize: large events turn the log over before it holds
// segmentBytes, so the two files stay within twice that.
func TestLogTurnsOverBySize(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	big := strings.Repeat("a", 200<<10)
	for i := range 50 {
		if err := s.Append(numbered{N: i, Note: big}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"history.jsonl", "history.1.jsonl"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > segmentBytes {
			t.Errorf("%s is %d bytes, over %d", f, fi.Size(), segmentBytes)
		}
	}
	got, read, err := History[numbered](s, 100)
	if err != nil || read.Damaged != 0 || len(got) < segmentBytes/len(big) || got[0].N != 49 {
		t.Fatalf("History: %d events, newest %+v, %+v, %v", len(got), got[0].N, read, err)
	}
	if err := s.Append(numbered{Note: strings.Repeat("a", maxLine)}); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("a line over maxLine was written (%v)", err)
	}
}

// TestEachLineBackward: lines are given last first whatever the blocks
// they straddle.
func TestEachLineBackward(t *testing.T) {
	for _, size := range []int{1, 100, backBlock - 3, backBlock, 3 * backBlock} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var buf bytes.Buffer
			var want []string
			for i := range 5 {
				l := fmt.Sprintf("%d:%s", i, strings.Repeat("z", size))
				want = append([]string{l}, want...)
				buf.WriteString(l + "\n")
			}
			buf.WriteString("cut")
			var got []string
			more, err := eachLineBackward(bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(l []byte) bool {
				got = append(got, string(l))
				return true
			})
			if err != nil || !more || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("got %d lines %.40q…, want %d", len(got), got, len(want))
			}
		})
	}
}
