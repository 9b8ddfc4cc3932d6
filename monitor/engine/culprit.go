package engine

import (
	"context"
	"sync"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// culprits are the installers caught at the first file event of a burst,
// while they still run, kept until the environment settles and is read.
// The watcher's goroutine catches them; the Run goroutine takes them.
type culprits struct {
	mu    sync.Mutex
	byEnv map[string]*monitor.Culprit
}

func newCulprits() culprits { return culprits{byEnv: map[string]*monitor.Culprit{}} }

// catch asks src for the process installing into env now.
func (c *culprits) catch(ctx context.Context, src procs.Source, env string) {
	if src == nil {
		return
	}
	in := src.Installer(ctx, env)
	if in == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byEnv[env] = &monitor.Culprit{PID: in.PID, Command: in.Command}
}

// take returns and forgets env's culprit, nil when none was caught.
func (c *culprits) take(env string) *monitor.Culprit {
	c.mu.Lock()
	defer c.mu.Unlock()
	cu := c.byEnv[env]
	delete(c.byEnv, env)
	return cu
}
