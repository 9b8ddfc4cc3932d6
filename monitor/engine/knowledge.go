package engine

import (
	"context"
	"time"
)

// KnowledgeEvery is how often the engine asks RefreshKnowledge to run:
// daily, as the kb_refresh setting promises.
const KnowledgeEvery = 24 * time.Hour

// knowledgeLoop runs o.RefreshKnowledge once at start and then every
// KnowledgeEvery on the engine's clock, in its own goroutine: it reads
// the network, which must never hold up the polls. A failure (offline) is
// logged and tried again the next day; it raises no finding.
func (m *Monitor) knowledgeLoop(ctx context.Context, t Ticker) {
	defer t.Stop()
	refresh := func() {
		if err := m.o.RefreshKnowledge(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("refreshing what GPU Canary knows of torch releases", "err", err)
		}
	}
	refresh()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			refresh()
		}
	}
}
