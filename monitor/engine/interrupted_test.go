package engine_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestInterruptedRepairIsNewsToTheFirstEngine: the first engine on a
// state folder takes the repairs already ended as known, but not the
// last repair of an environment when it was interrupted (GPU Canary
// killed, or stopped by the SIGHUP of a closed terminal): that one is
// REPAIR_INTERRUPTED, offline, or no one would ever hear of it (issue 32,
// L9). A repair interrupted and then run again to the end is old news.
func TestInterruptedRepairIsNewsToTheFirstEngine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, c repairCase)
		want  string
	}{
		{"killed", func(t *testing.T, c repairCase) {
			c.run(t, context.Background(), noSuchWheel, nil)
			killedJournal(t, c)
		}, "REPAIR_STARTED REPAIR_INTERRUPTED"},
		{"stopped by a signal", func(t *testing.T, c repairCase) {
			env, err := pyenv.Inspect(c.env)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := fixplan.Plan{Env: c.env, Installer: "pip", Variant: "cu124", CUDA: "12.4", Packages: []fixplan.Pin{{Name: "torch", Version: "2.5.1+cu124"}},
				Argv: []string{"/bin/sh", "-c", "echo waiting; exec sleep 60"}}
			res, err := fix.Run(ctx, p, env, fix.RunOptions{Journal: fixjournal.NewJournal(c.journals, c.env, time.Now()), Line: func(l string) {
				if l == "waiting" {
					cancel() // what the SIGHUP of a closed terminal does to `gpucanary fix`
				}
			}})
			if err != nil || !res.Interrupted {
				t.Fatalf("the run was not interrupted: %+v", res)
			}
		}, "REPAIR_STARTED REPAIR_INTERRUPTED"},
		{"killed, then repaired", func(t *testing.T, c repairCase) {
			if err := os.MkdirAll(c.journals, 0o700); err != nil {
				t.Fatal(err)
			}
			killedJournal(t, c)
			// Journal names hold the start to the millisecond: the next
			// one starts in a later one.
			for at := time.Now().UnixMilli(); time.Now().UnixMilli() == at; {
			}
			c.run(t, context.Background(), replaceTorch, nil)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newRepairCase(t)
			tc.setup(t, c)
			e := c.start(t, time.Hour)
			if err := engine.Sync(e.M); err != nil {
				t.Fatal(err)
			}
			e.Stop()
			var kinds []string
			for _, ev := range e.Events() {
				if strings.HasPrefix(string(ev.Kind), "REPAIR_") {
					kinds = append(kinds, string(ev.Kind))
					if !ev.Offline || ev.Env != c.env {
						t.Errorf("%s: offline %v, env %s", ev.Kind, ev.Offline, ev.Env)
					}
					if ev.Kind == monitor.KindRepairInterrupted && !strings.Contains(ev.Message, "interrupted") {
						t.Errorf("message %q", ev.Message)
					}
				}
			}
			if got := strings.Join(kinds, " "); got != tc.want {
				t.Errorf("published at the first start: %q, want %q\n%s", got, tc.want, e.Dump())
			}
		})
	}
}
