package inspect

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// ReadTimeout bounds one environment read. Reading an environment is
// milliseconds; one that takes this long is on a file system that has
// stopped answering (a dead NFS mount, a hung FUSE daemon), where a read
// can block in the kernel for good. It is a variable for tests.
var ReadTimeout = 10 * time.Second

// readEnv reads an environment; tests replace it to simulate a read
// that never returns.
var readEnv = (*pyenv.Reader).Inspect

// stuck are the environments whose last read has not returned: a read
// that blocks in the kernel cannot be cancelled, so its goroutine waits
// there, and the next read of that environment reports it at once rather
// than leaving one more goroutine behind.
var stuck = struct {
	sync.Mutex
	paths map[string]time.Time
}{paths: map[string]time.Time{}}

// inspectBounded reads the environment at path with rd within ReadTimeout and ctx:
// one stuck environment never holds `check`, the engine's loop or its
// shutdown.
func inspectBounded(ctx context.Context, rd *pyenv.Reader, path string, o pyenv.InspectOptions) (*pyenv.Env, error) {
	stuck.Lock()
	if since, ok := stuck.paths[path]; ok {
		stuck.Unlock()
		return nil, fmt.Errorf("an earlier read of it, started %s ago, has still not returned: its file system is not answering", time.Since(since).Round(time.Second))
	}
	stuck.Unlock()
	type result struct {
		env *pyenv.Env
		err error
	}
	done := make(chan result, 1)
	started := time.Now()
	read, timeout := readEnv, ReadTimeout // read before the read starts: tests put them back once it has
	go func() {
		env, err := read(rd, path, o)
		done <- result{env, err}
		stuck.Lock()
		delete(stuck.paths, path)
		stuck.Unlock()
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.env, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("reading %s: %w", path, ctx.Err())
	case <-timer.C:
		stuck.Lock()
		select {
		case r := <-done: // it returned just now
			stuck.Unlock()
			return r.env, r.err
		default:
		}
		stuck.paths[path] = started
		stuck.Unlock()
		return nil, fmt.Errorf("reading it took longer than %s: its file system is not answering", timeout)
	}
}
