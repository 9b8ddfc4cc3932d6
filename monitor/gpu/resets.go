// This file reads the display driver's resets (Windows' timeout detection
// and recovery, TDR) from the events Windows logs for them: the System
// log's event 4101 of the provider "Display", "Display driver nvlddmkm
// stopped responding and has successfully recovered". NVML has no event
// for a reset. What is platform-free is here (the query, the parsing of
// the rendered event, which events are new), so it is tested on every
// platform; a platform that has an event log gives the backend an
// eventQuery (eventlog_windows.go), and one that has none gives nothing.

package gpu

import (
	"context"
	"encoding/xml"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// eventQuery returns the events of the System log that match an XPath
// filter, each rendered as its XML, oldest first.
type eventQuery func(ctx context.Context, xpath string) ([]string, error)

// The event a reset is logged as, and how often the log is asked.
const (
	resetProvider = "Display"
	resetEventID  = 4101
	// resetDriver is NVIDIA's kernel driver, as event 4101 names it; a
	// reset of another display driver (an integrated GPU's) stops no
	// CUDA job.
	resetDriver = "nvlddmkm"
	// resetEvery is how many snapshots the log is asked once in (every
	// 10 s at the default 2 s refresh): a reset is rare and told within
	// seconds, and a poll need not query the log each time.
	resetEvery = 5
)

// resetReader gives the resets logged since it was made, each once.
type resetReader struct {
	query eventQuery
	log   *slog.Logger
	now   func() time.Time
	// since is when the reader was made: earlier events are not news.
	since time.Time
	// last is the newest record ID reported (0: none yet).
	last uint64
	// skip is how many snapshots are left before the log is asked again.
	skip int
	// failed is set once a query failed, so that is said once.
	failed bool
}

func newResetReader(q eventQuery, log *slog.Logger, now func() time.Time) *resetReader {
	if now == nil {
		now = time.Now
	}
	return &resetReader{query: q, log: log, now: now, since: now()}
}

// read returns the resets logged since the last read, asking the log at
// the first snapshot and once in resetEvery after it; nothing between,
// or when the log cannot be read (said once in the log).
func (r *resetReader) read(ctx context.Context) []DriverReset {
	if r.skip > 0 {
		r.skip--
		return nil
	}
	r.skip = resetEvery - 1
	events, err := r.query(ctx, resetXPath(r.since, r.last))
	if err != nil {
		if !r.failed {
			r.failed = true
			r.log.Info("display driver resets (DRIVER_RESET) cannot be read from the System event log", "error", err.Error())
		}
		return nil
	}
	var out []DriverReset
	for _, text := range events {
		ev, err := parseResetEvent(text)
		if err != nil {
			r.log.Debug("reading a display event", "error", err.Error())
			continue
		}
		// The query asks for these already; a log that ignores part of
		// it (an older Windows, a stand-in) is held to it here.
		if ev.provider != resetProvider || ev.id != resetEventID || ev.record <= r.last || ev.at.Before(r.since) {
			continue
		}
		r.last = ev.record
		if !strings.EqualFold(ev.driver, resetDriver) {
			continue
		}
		out = append(out, DriverReset{Driver: ev.driver, Time: ev.at})
	}
	return out
}

// resetXPath is the System log filter for the reset events logged at or
// after since with a record ID above last.
func resetXPath(since time.Time, last uint64) string {
	return fmt.Sprintf("*[System[Provider[@Name='%s'] and (EventID=%d) and TimeCreated[@SystemTime>='%s'] and (EventRecordID>%d)]]",
		resetProvider, resetEventID, since.UTC().Format("2006-01-02T15:04:05.000Z"), last)
}

// resetEvent is what a rendered event says that a reset needs.
type resetEvent struct {
	provider string
	id       int
	record   uint64
	at       time.Time
	driver   string // the first data item: the driver's name
}

// eventXML is the part of an event's XML (the Event schema,
// http://schemas.microsoft.com/win/2004/08/events/event) read here.
type eventXML struct {
	XMLName xml.Name `xml:"Event"`
	System  struct {
		Provider struct {
			Name string `xml:"Name,attr"`
		} `xml:"Provider"`
		EventID     string `xml:"EventID"`
		TimeCreated struct {
			SystemTime string `xml:"SystemTime,attr"`
		} `xml:"TimeCreated"`
		EventRecordID string `xml:"EventRecordID"`
	} `xml:"System"`
	Data []string `xml:"EventData>Data"`
}

// parseResetEvent reads one rendered event.
func parseResetEvent(text string) (resetEvent, error) {
	var e eventXML
	if err := xml.Unmarshal([]byte(text), &e); err != nil {
		return resetEvent{}, fmt.Errorf("parsing an event's XML: %w", err)
	}
	id, err := strconv.Atoi(strings.TrimSpace(e.System.EventID))
	if err != nil {
		return resetEvent{}, fmt.Errorf("an event's ID %q: %w", e.System.EventID, err)
	}
	record, err := strconv.ParseUint(strings.TrimSpace(e.System.EventRecordID), 10, 64)
	if err != nil {
		return resetEvent{}, fmt.Errorf("an event's record ID %q: %w", e.System.EventRecordID, err)
	}
	at, err := time.Parse(time.RFC3339Nano, e.System.TimeCreated.SystemTime)
	if err != nil {
		return resetEvent{}, fmt.Errorf("an event's time %q: %w", e.System.TimeCreated.SystemTime, err)
	}
	ev := resetEvent{provider: e.System.Provider.Name, id: id, record: record, at: at}
	if len(e.Data) > 0 {
		ev.driver = strings.TrimSpace(e.Data[0])
	}
	return ev, nil
}
