package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

// displayEvent is event XML as Windows renders a Display event: id, its
// record ID, its time and its first data item (the driver).
func displayEvent(id int, record uint64, at time.Time, driver string) string {
	return fmt.Sprintf(`<Event xmlns='http://schemas.microsoft.com/win/2004/08/events/event'><System><Provider Name='Display'/>`+
		`<EventID Qualifiers='0'>%d</EventID><Version>0</Version><Level>3</Level><Task>0</Task><Opcode>0</Opcode>`+
		`<Keywords>0x80000000000000</Keywords><TimeCreated SystemTime='%s'/><EventRecordID>%d</EventRecordID>`+
		`<Correlation/><Execution ProcessID='4' ThreadID='9120'/><Channel>System</Channel><Computer>DESKTOP-4090</Computer><Security/></System>`+
		`<EventData><Data>%s</Data><Data></Data></EventData></Event>`, id, at.UTC().Format("2006-01-02T15:04:05.0000000Z"), record, driver)
}

func TestParseResetEvent(t *testing.T) {
	at := time.Date(2026, 11, 29, 3, 12, 45, 123456700, time.UTC)
	ev, err := parseResetEvent(displayEvent(4101, 48213, at, "nvlddmkm"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (resetEvent{provider: "Display", id: 4101, record: 48213, at: at, driver: "nvlddmkm"}); ev != want {
		t.Errorf("event = %+v, want %+v", ev, want)
	}
	for _, bad := range []string{
		"not xml",
		`<Event><System><EventID>x</EventID></System></Event>`,
		strings.Replace(displayEvent(4101, 1, at, "nvlddmkm"), "<EventRecordID>1<", "<EventRecordID>-1<", 1),
		strings.Replace(displayEvent(4101, 1, at, "nvlddmkm"), "SystemTime='2026", "SystemTime='yesterday", 1),
	} {
		if _, err := parseResetEvent(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// TestResetReader: the reader asks the log for event 4101 since it was
// made and past the last record reported, once in resetEvery snapshots;
// it reports NVIDIA's driver's resets once each, holds a log that ignores
// the filter to it, and says once that the log cannot be read.
func TestResetReader(t *testing.T) {
	start := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	now := start
	var logged []string
	var queries []string
	var fail error
	q := func(_ context.Context, xpath string) ([]string, error) {
		queries = append(queries, xpath)
		return logged, fail
	}
	var logs bytes.Buffer
	r := newResetReader(q, slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })

	logged = []string{displayEvent(4101, 10, start.Add(-time.Hour), "nvlddmkm")} // before the start
	if got := r.read(context.Background()); got != nil {
		t.Errorf("an old reset: %v", got)
	}
	if want := "*[System[Provider[@Name='Display'] and (EventID=4101) and TimeCreated[@SystemTime>='2026-11-29T03:00:00.000Z'] and (EventRecordID>0)]]"; queries[0] != want {
		t.Errorf("query\n got %s\nwant %s", queries[0], want)
	}
	logged = append(logged, displayEvent(4101, 11, start.Add(time.Second), "nvlddmkm"))
	for range resetEvery - 1 {
		if got := r.read(context.Background()); got != nil || len(queries) != 1 {
			t.Errorf("asked again before resetEvery snapshots: %v, %d queries", got, len(queries))
		}
	}
	got := r.read(context.Background())
	if want := []DriverReset{{Driver: "nvlddmkm", Time: start.Add(time.Second)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("a new reset: %v, want %v", got, want)
	}
	logged = append(logged,
		displayEvent(4101, 12, start.Add(12*time.Second), "igdkmd64"), // Intel's: no CUDA job stops
		displayEvent(4100, 13, start.Add(13*time.Second), "nvlddmkm"), // another event
		displayEvent(4101, 14, start.Add(14*time.Second), "nvlddmkm"),
		"<Event>",
	)
	skip(r)
	got = r.read(context.Background())
	if want := []DriverReset{{Driver: "nvlddmkm", Time: start.Add(14 * time.Second)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the next read: %v, want only record 14", got)
	}
	if !strings.Contains(queries[len(queries)-1], "(EventRecordID>11)") {
		t.Errorf("the query does not start past the last record: %s", queries[len(queries)-1])
	}
	fail = errors.New("The specified channel could not be found.")
	for range 3 {
		skip(r)
		if got := r.read(context.Background()); got != nil {
			t.Errorf("a failing log: %v", got)
		}
	}
	if n := strings.Count(logs.String(), "cannot be read"); n != 1 {
		t.Errorf("said %d times that the log cannot be read:\n%s", n, logs.String())
	}
}

// skip reads past the snapshots at which r does not ask the log.
func skip(r *resetReader) {
	for range resetEvery - 1 {
		r.read(context.Background())
	}
}

// TestBackendDriverResets: the NVML backend puts the reader's resets in
// the state.
func TestBackendDriverResets(t *testing.T) {
	start := time.Now()
	q := func(context.Context, string) ([]string, error) {
		return []string{displayEvent(4101, 7, start.Add(time.Second), "nvlddmkm")}, nil
	}
	b := newNVMLBackend(&fakeLibrary{}, nvmlConfig{resets: newResetReader(q, slog.New(slog.DiscardHandler), func() time.Time { return start })})
	defer b.Close()
	if got := b.Snapshot(context.Background()).DriverResets; len(got) != 1 || got[0].Driver != "nvlddmkm" {
		t.Errorf("resets = %v", got)
	}
}
