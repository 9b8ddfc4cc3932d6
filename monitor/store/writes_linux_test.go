package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// written is the bytes this process has handed to write(2) and its kin
// so far (/proc/self/io's wchar): what the store writes, counted by the
// kernel rather than by the store.
func written(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io to count the bytes written: %v", err)
	}
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(l, []byte("wchar: ")); ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("/proc/self/io has no wchar")
	return 0
}

// TestAppendWritesOnlyTheEvent is issue 41 item 8: an Append writes the
// event's line and nothing else, however long the history is. The old
// store rewrote the whole history per event (2.2 MB at a thousand).
func TestAppendWritesOnlyTheEvent(t *testing.T) {
	ev := numbered{N: 7, Note: "torch 2.5.1+cu121 was replaced by 2.5.1+cpu"}
	raw, _ := json.Marshal(ev)
	line := int64(len(frame(raw)))
	for _, length := range []int{0, 10, segmentEvents - 20, 3 * segmentEvents / 2} {
		t.Run(fmt.Sprint(length), func(t *testing.T) {
			const appends = 40 // across a turn-over for segmentEvents-20
			// The count is the whole process's: another goroutine writing
			// meanwhile (the test runner's output, a parallel test) only
			// adds to it, so the least of three tries, each on a history
			// of its own, is the Appends' own.
			var got int64
			for try := 0; try < 3; try++ {
				s := Open(t.TempDir())
				appendN(t, s, 0, length)
				if err := s.Append(ev); err != nil { // counted, migrated: what follows is the steady state
					t.Fatal(err)
				}
				before := written(t)
				for range appends {
					if err := s.Append(ev); err != nil {
						t.Fatal(err)
					}
				}
				if got = written(t) - before; got == appends*line {
					break
				}
			}
			if got != appends*line {
				t.Errorf("with %d events in the history, %d Appends wrote %d bytes, want %d (%d a line)", length+1, appends, got, appends*line, line)
			}
		})
	}
}

// BenchmarkAppend reports the bytes written per event at two lengths of
// history: the same, as the time is (a write and a sync).
func BenchmarkAppend(b *testing.B) {
	for _, length := range []int{10, segmentEvents - 1} {
		b.Run(fmt.Sprintf("history=%d", length), func(b *testing.B) {
			s := Open(b.TempDir())
			appendN(b, s, 0, length)
			before := written(b)
			n := 0
			for b.Loop() {
				if err := s.Append(numbered{N: n}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(written(b)-before)/float64(n), "written-B/op")
		})
	}
}
