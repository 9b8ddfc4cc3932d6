package engine

import "time"

// The notification policy's controls, on the engine itself, so that a view
// (the tray) can name what it uses of the engine as a small interface of
// its own instead of reaching through Policy.

// Snooze silences notifications about env until the given time (zero
// unsnoozes): Policy.Snooze.
func (m *Monitor) Snooze(env string, until time.Time) { m.policy.Snooze(env, until) }

// Snoozed reports until when env is snoozed (zero when it is not):
// Policy.Snoozed.
func (m *Monitor) Snoozed(env string, now time.Time) time.Time { return m.policy.Snoozed(env, now) }

// Pause silences every notification until the given time (zero resumes):
// Policy.Pause.
func (m *Monitor) Pause(until time.Time) { m.policy.Pause(until) }

// Paused reports until when every notification is paused (zero when they
// are not): Policy.Paused.
func (m *Monitor) Paused(now time.Time) time.Time { return m.policy.Paused(now) }
