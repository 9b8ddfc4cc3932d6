package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
)

// TestKnowledgeRefreshIsDaily: with the kb_refresh setting on, the engine
// asks for a refresh at start and then once a day on its clock; a failed
// one (offline) stops nothing.
func TestKnowledgeRefreshIsDaily(t *testing.T) {
	calls := make(chan time.Time, 10)
	clock := monitortest.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	refresh := func(ctx context.Context) error {
		calls <- clock.Now()
		return errors.New("offline")
	}
	monitortest.Start(t, engine.Options{Paths: []string{t.TempDir()}, Clock: clock, RefreshKnowledge: refresh})
	next := func() time.Time {
		select {
		case at := <-calls:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no refresh")
		}
		return time.Time{}
	}
	first := next()
	clock.Advance(engine.KnowledgeEvery)
	if at := next(); at.Sub(first) != engine.KnowledgeEvery {
		t.Errorf("second refresh %s after the first, want %s", at.Sub(first), engine.KnowledgeEvery)
	}
	if len(calls) != 0 {
		t.Errorf("%d refreshes more than one a day", len(calls))
	}
}
