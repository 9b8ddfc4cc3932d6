package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// repairCase is a CPU torch environment, a CUDA one staged beside it,
// and the folders of a state directory: repairs run with fix.Run as
// `gpucanary fix` runs them, with real installer processes (sh), and
// write their journals where the engine reads them.
type repairCase struct {
	env, staged, journals, state string
}

func newRepairCase(t *testing.T) repairCase {
	t.Helper()
	root := t.TempDir()
	c := repairCase{env: filepath.Join(root, "proj", ".venv"), staged: filepath.Join(root, "staged"),
		journals: filepath.Join(root, "state", "journal"), state: filepath.Join(root, "state")}
	for path, v := range map[string]string{c.env: "2.5.1+cpu", c.staged: "2.5.1+cu124"} {
		cuda := ""
		if strings.Contains(v, "cu124") {
			cuda = "12.4"
		}
		if err := pyenvtest.Write(path, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: v, CUDA: cuda, Installer: "pip"}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// start runs an engine over the environment, reading the journals and
// remembering in the state folder.
func (c repairCase) start(t *testing.T, interval time.Duration) *monitortest.Engine {
	return monitortest.Start(t, engine.Options{Paths: []string{c.env}, Journals: c.journals, Store: store.Open(c.state), Interval: interval})
}

// run repairs the environment with the installer script (run by sh, $1
// the environment, $2 the staged CUDA one).
func (c repairCase) run(t *testing.T, ctx context.Context, script string, recorded func(string)) fixjournal.Result {
	t.Helper()
	env, err := pyenv.Inspect(c.env)
	if err != nil {
		t.Fatal(err)
	}
	p := fixplan.Plan{Env: c.env, Installer: "pip", Variant: "cu124", CUDA: "12.4", Index: "https://download.pytorch.org/whl/cu124",
		Packages: []fixplan.Pin{{Name: "torch", Version: "2.5.1+cu124"}},
		Argv:     []string{"/bin/sh", "-c", script, "sh", c.env, c.staged}}
	res, err := fix.Run(ctx, p, env, fix.RunOptions{Journal: fixjournal.NewJournal(c.journals, c.env, time.Now()), Recorded: recorded})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const (
	replaceTorch = `rm -rf "$1" && cp -R "$2" "$1"`
	noSuchWheel  = `echo "Looking in indexes: https://download.pytorch.org/whl/cu124"; echo "ERROR: No matching distribution found for torch==2.5.1+cu124" >&2; exit 1`
)

// TestRepairsAreEvents: every repair, run by whichever process, is
// recorded by the engine from its journal: REPAIR_STARTED, then
// REPAIR_SUCCEEDED, REPAIR_FAILED (with the installer's own error lines)
// or REPAIR_INTERRUPTED, in its history and on the wire of watch --json.
func TestRepairsAreEvents(t *testing.T) {
	c := newRepairCase(t)
	e := c.start(t, 50*time.Millisecond)
	ctx := context.Background()
	repair := func(k monitor.Kind) func(monitor.Event) bool { return monitortest.Kind(k, c.env) }

	t.Run("failed, with the installer's words and no rollback", func(t *testing.T) {
		res := c.run(t, ctx, noSuchWheel, nil)
		ev := e.Wait(10*time.Second, repair(monitor.KindRepairFailed))
		if ev.Repair == nil || ev.Repair.Journal != res.Journal || len(ev.Repair.Cause) != 1 || ev.Repair.Rollback != "" || ev.Fix != "" {
			t.Errorf("REPAIR_FAILED = %+v, repair %+v", ev, ev.Repair)
		}
		if !strings.Contains(ev.Message, "No matching distribution found for torch==2.5.1+cu124") || !strings.Contains(ev.Message, "exit status 1") {
			t.Errorf("message %q", ev.Message)
		}
		started := e.Wait(time.Second, repair(monitor.KindRepairStarted))
		if started.Repair == nil || !strings.Contains(started.Message, "/bin/sh") || started.Time.After(ev.Time) {
			t.Errorf("REPAIR_STARTED = %+v", started)
		}
		// The JSON of `watch --json` carries it, with stable names.
		b, _ := json.Marshal(ev)
		if !strings.Contains(string(b), `"kind":"REPAIR_FAILED"`) || !strings.Contains(string(b), `"cause":["ERROR: No matching distribution`) {
			t.Errorf("JSON: %s", b)
		}
	})
	t.Run("succeeded", func(t *testing.T) {
		c.run(t, ctx, replaceTorch, nil)
		ev := e.Wait(10*time.Second, repair(monitor.KindRepairSucceeded))
		if !strings.Contains(ev.Message, "torch 2.5.1+cpu → 2.5.1+cu124") || ev.Repair.After["torch"] != "2.5.1+cu124" {
			t.Errorf("REPAIR_SUCCEEDED = %+v", ev)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan fixjournal.Result, 1)
		go func() { done <- c.run(t, ctx, `echo waiting; exec sleep 60`, nil) }()
		e.Wait(10*time.Second, func(ev monitor.Event) bool {
			return ev.Kind == monitor.KindRepairStarted && strings.Contains(ev.Message, "sleep 60")
		})
		cancel()
		<-done
		ev := e.Wait(10*time.Second, repair(monitor.KindRepairInterrupted))
		if !strings.Contains(ev.Message, "interrupted") {
			t.Errorf("REPAIR_INTERRUPTED = %+v", ev)
		}
	})
	if h := e.M.History(store.HistoryLimit); len(h) == 0 || h[0].Kind != monitor.KindRepairInterrupted {
		t.Errorf("history, newest first, starts with %v", h[0].Kind)
	}
}

// TestReadJournalsAtOnce: with polls far apart, the windows process's
// word (ReadJournals, sent over the link as the journal records a start
// and an end) is what makes the engine publish the repair at once.
func TestReadJournalsAtOnce(t *testing.T) {
	c := newRepairCase(t)
	e := c.start(t, time.Hour)
	release := filepath.Join(t.TempDir(), "release")
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(t, context.Background(), `while [ ! -e "`+release+`" ]; do sleep 0.05; done; `+replaceTorch, func(string) {
			if err := e.M.ReadJournals(); err != nil {
				t.Error(err)
			}
		})
	}()
	e.Wait(10*time.Second, monitortest.Kind(monitor.KindRepairStarted, c.env))
	if n := e.Count(monitortest.Kind(monitor.KindRepairSucceeded, c.env)); n != 0 {
		t.Fatal("succeeded before the installer ended")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
	e.Wait(10*time.Second, monitortest.Kind(monitor.KindRepairSucceeded, c.env))
}

// TestRepairsAcrossRestarts: a repair run while no engine runs is
// published at the next start, marked offline; one already published is
// not published again; and a repair GPU Canary was killed during is
// REPAIR_INTERRUPTED.
func TestRepairsAcrossRestarts(t *testing.T) {
	c := newRepairCase(t)
	e := c.start(t, 50*time.Millisecond)
	c.run(t, context.Background(), noSuchWheel, nil)
	e.Wait(10*time.Second, monitortest.Kind(monitor.KindRepairFailed, c.env))
	e.Stop()

	c.run(t, context.Background(), replaceTorch, nil)
	killedJournal(t, c)
	e = c.start(t, time.Hour)
	if err := engine.Sync(e.M); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	var kinds []string
	for _, ev := range e.Events() {
		if strings.HasPrefix(string(ev.Kind), "REPAIR_") {
			kinds = append(kinds, string(ev.Kind))
			if !ev.Offline {
				t.Errorf("%s found at the start is not marked offline", ev.Kind)
			}
		}
	}
	if strings.Join(kinds, " ") != "REPAIR_STARTED REPAIR_SUCCEEDED REPAIR_STARTED REPAIR_INTERRUPTED" {
		t.Errorf("published at the restart: %v; want the repair run meanwhile and the killed one, not the failed one again:\n%s", kinds, e.Dump())
	}
	killed := e.Events()[len(e.Events())-1]
	for _, ev := range e.Events() {
		if ev.Kind == monitor.KindRepairInterrupted {
			killed = ev
		}
	}
	if !strings.Contains(killed.Message, "stopped before it finished") {
		t.Errorf("killed repair: %q", killed.Message)
	}
}

// TestRepairsAlreadyThereAreNotNews: the first engine that records
// repairs does not publish the journals of old repairs, already ended.
func TestRepairsAlreadyThereAreNotNews(t *testing.T) {
	c := newRepairCase(t)
	c.run(t, context.Background(), noSuchWheel, nil)
	e := c.start(t, time.Hour)
	if err := engine.Sync(e.M); err != nil {
		t.Fatal(err)
	}
	c.run(t, context.Background(), replaceTorch, nil)
	if err := e.M.ReadJournals(); err != nil {
		t.Fatal(err)
	}
	e.Wait(10*time.Second, monitortest.Kind(monitor.KindRepairSucceeded, c.env))
	e.Stop()
	if n := e.Count(monitortest.Kind(monitor.KindRepairFailed, c.env)); n != 0 {
		t.Errorf("an old repair was published:\n%s", e.Dump())
	}
}

// killedJournal writes the journal of a repair whose GPU Canary was
// killed during it: a start, an installer, and no result, its recorder a
// process that has exited.
func killedJournal(t *testing.T, c repairCase) {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	started := time.Now() // after the other repairs: journals are published in the order they started
	j := fixjournal.NewJournal(c.journals, c.env, started)
	lines := []map[string]any{
		{"time": started, "event": "started", "env": c.env, "recorder_pid": dead.Process.Pid, "plan": fixplan.Plan{Env: c.env, Argv: []string{"pip", "install"}}},
		{"time": started.Add(time.Second), "event": "installer", "pid": dead.Process.Pid},
	}
	var b strings.Builder
	for _, l := range lines {
		data, _ := json.Marshal(l)
		b.Write(append(data, '\n'))
	}
	if err := os.WriteFile(j.Path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}
