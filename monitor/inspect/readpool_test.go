//go:build !windows

package inspect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// hangingReads makes the reads of the environments in hung block for
// real: each opens a FIFO that no one has opened for writing, which waits
// in the kernel until release (or the end of the test). The channels
// receive each hung environment's path as its read starts, and each other
// environment's path once its read has returned.
func hangingReads(t *testing.T, hung []string) (entered, read <-chan string, release func()) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "never-written")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	others, started := make(chan string, 100), make(chan string, len(hung))
	returned := make(chan struct{}, len(hung))
	old, oldTimeout := readEnv, ReadTimeout
	readEnv = func(_ *pyenv.Reader, p string, _ pyenv.InspectOptions) (*pyenv.Env, error) {
		if slices.Contains(hung, p) {
			defer func() { returned <- struct{}{} }()
			started <- p
			f, err := os.Open(fifo) // blocks until a writer opens it
			if err == nil {
				f.Close()
			}
			return pyenv.Inspect(p)
		}
		defer func() { others <- p }()
		return pyenv.Inspect(p)
	}
	ReadTimeout = time.Hour // no deadline ends a hung read during the test
	var w *os.File
	release = func() {
		if w != nil {
			return
		}
		// A reader-writer open never blocks, and lets every open for
		// reading through from then on.
		var err error
		if w, err = os.OpenFile(fifo, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		release()
		defer w.Close()
		for range hung {
			select {
			case <-returned:
			case <-time.After(time.Minute):
				t.Error("a hung read did not return after the FIFO was opened")
			}
		}
		readEnv, ReadTimeout = old, oldTimeout // once no read is under way
	})
	return started, others, release
}

// hungAndGood writes readWorkers-1 environments whose reads will hang,
// first (they take the workers first), then five others.
func hungAndGood(t *testing.T) (found []envsearch.Found, hung, good []string) {
	dir := t.TempDir()
	for i := range readWorkers - 1 + 5 {
		p := filepath.Join(dir, fmt.Sprintf("env%d", i), ".venv")
		if err := pyenvtest.Write(p, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
			t.Fatal(err)
		}
		found = append(found, envsearch.Found{Path: p})
		if i < readWorkers-1 {
			hung = append(hung, p)
		} else {
			good = append(good, p)
		}
	}
	return found, hung, good
}

// waitReads waits until every read in good has returned and every read
// in hung has started (and hangs).
func waitReads(t *testing.T, entered, read <-chan string, hung, good []string) {
	t.Helper()
	for range good {
		select {
		case <-read:
		case <-time.After(time.Minute):
			t.Fatalf("the other environments were not read while %d reads hung", len(hung))
		}
	}
	for range hung {
		select {
		case <-entered:
		case <-time.After(time.Minute):
			t.Fatal("a read that hangs never started")
		}
	}
}

// await is Check's result from done, or a failure saying late when none
// came within a minute.
func await(t *testing.T, done <-chan monitor.CheckResult, late string) monitor.CheckResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(time.Minute):
		t.Fatal(late)
	}
	return monitor.CheckResult{}
}

// TestHungReadsHoldOnlyTheirWorkers: while the reads of all but one of
// Check's workers hang in the kernel (a dead mount), the other
// environments are all read by the one worker left, before any hung read
// returns; once those return, the reports come in the order given.
func TestHungReadsHoldOnlyTheirWorkers(t *testing.T) {
	found, hung, good := hungAndGood(t)
	entered, read, release := hangingReads(t, hung)
	done := make(chan monitor.CheckResult, 1)
	go func() { done <- Check(context.Background(), nil, gpu.State{}, found, health.Options{}) }()
	waitReads(t, entered, read, hung, good)
	select {
	case <-done:
		t.Fatal("Check returned while reads hung")
	default:
	}
	release()
	res := await(t, done, "Check did not return once the hung reads could")
	for i, r := range res.Envs {
		if r.Path != found[i].Path {
			t.Errorf("report %d is %s, want %s: not in the order given", i, r.Path, found[i].Path)
		} else if r.Torch() == nil || r.Verdict == monitor.VerdictError {
			t.Errorf("%s was not read: %+v", r.Path, r)
		}
	}
}

// TestAStopWaitsForNoHungRead: Check's context ending while reads hang in
// the kernel returns at once, the hung environments unreadable with the
// context's error, in the order given.
func TestAStopWaitsForNoHungRead(t *testing.T) {
	found, hung, good := hungAndGood(t)
	entered, read, _ := hangingReads(t, hung)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan monitor.CheckResult, 1)
	go func() { done <- Check(ctx, nil, gpu.State{}, found, health.Options{}) }()
	waitReads(t, entered, read, hung, good)
	cancel()
	res := await(t, done, "Check waited for the hung reads after its context ended")
	for i, r := range res.Envs {
		if r.Path != found[i].Path {
			t.Errorf("report %d is %s, want %s: not in the order given", i, r.Path, found[i].Path)
		}
		if i < len(hung) && (len(r.Findings) != 1 || r.Findings[0].Code != finding.CodeEnvUnreadable || !strings.Contains(r.Findings[0].Message, "canceled")) {
			t.Errorf("hung %s: %+v", r.Path, r.Findings)
		}
	}
}
