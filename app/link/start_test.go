package link

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
)

// TestStartReadsTheSnapshotMeanwhile: Start returns before the tray has
// sent its snapshot (the windows process starts its toolkit meanwhile),
// State waits for it, and the requests sent after it arrive.
func TestStartReadsTheSnapshotMeanwhile(t *testing.T) {
	r, w := io.Pipe()
	tr := Start(r, io.Discard) // nothing is written yet: a Start that waited would never return
	enc := json.NewEncoder(w)
	go func() {
		enc.Encode(ToWindows{Hello: &Hello{State: monitor.State{Started: true, Envs: []monitor.EnvReport{{Via: "home", Verdict: monitor.VerdictOK}}}}})
		enc.Encode(ToWindows{Request: &Request{Show: ShowGPUs}})
		w.Close()
	}()
	if s := tr.State(); !s.Started || len(s.Envs) != 1 || s.Envs[0].Via != "home" {
		t.Errorf("State after the snapshot = %+v", s)
	}
	var got []string
	for r := range tr.Requests() {
		got = append(got, r.Show)
	}
	if len(got) != 1 || got[0] != ShowGPUs || tr.Err() != nil {
		t.Errorf("requests %v, err %v", got, tr.Err())
	}
}

// TestStartWithABadSnapshot: a snapshot that cannot be read ends the link
// at once, Err saying so, and the state stays empty rather than blocking.
func TestStartWithABadSnapshot(t *testing.T) {
	for _, in := range []string{"", "not json", `{"state":{"started":true}}`} {
		tr := Start(strings.NewReader(in), io.Discard)
		for range tr.Requests() {
		}
		if err := tr.Err(); err == nil || !strings.Contains(err.Error(), "snapshot") {
			t.Errorf("Start(%q): Err() = %v", in, err)
		}
		if tr.State().Started || len(tr.Samples().GPUs) != 0 {
			t.Errorf("Start(%q): a state from a bad snapshot: %+v", in, tr.State())
		}
	}
}
