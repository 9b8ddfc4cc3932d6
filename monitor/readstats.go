package monitor

import "time"

// TorchChange is when an environment's torch last changed, as the engine
// saw it (or, for a change made while it was stopped, found it on start).
// Metrics and alerts read it: "torch in this environment was replaced an
// hour ago and is still not CUDA".
type TorchChange struct {
	// Changed is the time of the last torch event: installed, changed,
	// replaced or removed.
	Changed time.Time `json:"changed,omitzero"`
	// Replaced is the time of the last CUDA_WHEEL_REPLACED: a CUDA build
	// overwritten by another build.
	Replaced time.Time `json:"replaced,omitzero"`
}

// noteTorch records the time of a torch event; an environment that is
// gone takes its times with it. Run's goroutine only.
func (m *Monitor) noteTorch(e Event) {
	switch e.Kind {
	case KindEnvRemoved:
		delete(m.torchChanges, e.Env)
	case KindTorchInstalled, KindTorchChanged, KindTorchRemoved, KindCUDAWheelReplaced:
		t := m.torchChanges[e.Env]
		t.Changed = e.Time
		if e.Kind == KindCUDAWheelReplaced {
			t.Replaced = e.Time
		}
		m.torchChanges[e.Env] = t
	}
}

// readDone records that a full read of every environment, begun at began,
// has ended.
func (m *Monitor) readDone(began time.Time) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.LastRead = now
	m.state.LastReadDuration = now.Sub(began)
}

// polledAt records the end of a poll of the GPU and processes.
func (m *Monitor) polledAt(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Polled = t
}
