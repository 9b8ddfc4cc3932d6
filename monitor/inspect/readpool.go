package inspect

import (
	"context"
	"runtime"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
)

// readWorkers bounds how many environments are read at once. A read
// mostly waits on the disk, and one on a file system that stopped
// answering holds its worker until its deadline (ReadTimeout): with
// several workers the other environments are read meanwhile, each at its
// own speed. It is a variable for tests.
var readWorkers = max(4, runtime.GOMAXPROCS(0))

// readAhead bounds how many reports are read and not yet used. It is a
// variable for tests.
var readAhead = 32

// InspectEach reads the environments in found, up to readWorkers at a
// time, each with read (InspectOne with the GPU and options, or a test's
// stand-in), and hands every report to use on the caller's goroutine in
// found's order, each as soon as it and those before it are read: what
// callers print or publish stays in a fixed order, and a read that hangs
// delays the reports after it by its deadline at most, never the other
// reads. use returning false stops: no more reads start, and those under
// way are told to stop (their context ends). When ctx ends, the reports
// not yet read are Unreadable with ctx's error at once: InspectEach never
// waits for a read that has not returned.
func InspectEach(ctx context.Context, found []envsearch.Found, read func(context.Context, envsearch.Found) monitor.EnvReport, use func(i int, rep monitor.EnvReport) bool) {
	Each(ctx, found, read, Unreadable, use)
}

// Each is InspectEach for a read that gives something other than the
// report itself (`check --json`'s workers give each report already
// encoded, so that encoding runs on every core, not after the reads on
// one): unreadable makes the answer for a read that ctx cut short.
func Each[T any](ctx context.Context, found []envsearch.Found, read func(context.Context, envsearch.Found) T, unreadable func(envsearch.Found, error) T, use func(i int, rep T) bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The folders above many environments are looked in for a uv
	// project once per pass.
	ctx = uvproject.WithFinder(ctx)
	results := make([]chan T, len(found))
	next := make(chan int, len(found))
	for i := range found {
		results[i] = make(chan T, 1)
		next <- i
	}
	close(next)
	// The reads run at most readAhead reports ahead of use: a read of an
	// environment whose files' facts are kept is faster than its
	// writing, and a thousand of them would otherwise all wait in memory
	// at once.
	ahead := make(chan struct{}, max(readAhead, readWorkers))
	for range min(readWorkers, len(found)) {
		// Each worker ends when the queue is empty or ctx has ended, after
		// the read in hand (InspectOne returns by its deadline).
		go func() {
			for {
				// A slot first, then the next report: the reads that hold
				// slots are then always the earliest not yet used, so the
				// report use waits for is one of them, never a read
				// waiting for a slot that later reads hold.
				select {
				case ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i, ok := <-next
				if !ok || ctx.Err() != nil {
					select {
					case <-ahead:
					default:
					}
					return
				}
				results[i] <- read(ctx, found[i])
			}
		}()
	}
	for i, f := range found {
		var rep T
		select {
		case rep = <-results[i]:
		case <-ctx.Done():
			select {
			case rep = <-results[i]: // read just as ctx ended
			default:
				rep = unreadable(f, ctx.Err())
			}
		}
		more := use(i, rep)
		select {
		case <-ahead: // its slot, for the next read
		default: // cut short: its read never started
		}
		if !more {
			return
		}
	}
}
