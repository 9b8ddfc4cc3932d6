package tray

import (
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
)

// Engine is what the tray uses of the engine: its state and events, the
// environments added and removed from the menu, the repairs' journals,
// and the notification controls (snooze, pause). *engine.Monitor is one;
// a test may pass a small fake.
type Engine interface {
	State() monitor.State
	// History is the newest remembered events, at most limit, newest first.
	History(limit int) []monitor.Event
	Subscribe() (<-chan monitor.Event, func())
	Add(path string) error
	Forget(path string) error
	ReadJournals() error
	WatchEnd(pid int, start time.Time) error
	QuietJob(pid int, start time.Time) error
	Snooze(env string, until time.Time)
	Snoozed(env string, now time.Time) time.Time
	Pause(until time.Time)
	Paused(now time.Time) time.Time
}

var _ Engine = (*engine.Monitor)(nil)
