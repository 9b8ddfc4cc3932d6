package engine

import (
	"log/slog"
	"sync"

	"github.com/gpucanary/gpucanary/monitor"
)

// subscriberBuffer is how many events a subscriber may fall behind before
// it loses some.
const subscriberBuffer = 1024

// hub hands every published event to every subscriber, never waiting for
// one: a subscriber that falls behind loses events (and the log says so)
// rather than stalling the engine.
type hub struct {
	log    *slog.Logger
	mu     sync.Mutex
	subs   map[int]chan monitor.Event
	next   int
	closed bool // Run has returned: subscriptions are closed, new ones too
}

func newHub(log *slog.Logger) hub { return hub{log: log, subs: map[int]chan monitor.Event{}} }

func (h *hub) subscribe() (<-chan monitor.Event, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan monitor.Event, subscriberBuffer)
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	id := h.next
	h.next++
	h.subs[id] = ch
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if c, ok := h.subs[id]; ok {
			delete(h.subs, id)
			close(c)
		}
	}
}

func (h *hub) send(events []monitor.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range events {
		h.log.Debug("event", "kind", e.Kind, "env", e.Env, "notify", e.Notify)
		for _, ch := range h.subs {
			select {
			case ch <- e:
			default:
				h.log.Warn("a subscriber is too slow; an event was dropped for it", "kind", e.Kind)
			}
		}
	}
}

// close ends every subscription; later ones are closed at once.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for id, ch := range h.subs {
		close(ch)
		delete(h.subs, id)
	}
}
