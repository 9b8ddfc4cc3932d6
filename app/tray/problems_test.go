package tray

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// TestBadFilesAtStartAreTold: a settings file with an error and a GPU
// scenario file that cannot be used are told in notifications once the
// tray is up, and the menu says the settings file has an error (opening
// Settings…) until the file is mended, even mended back to the defaults.
func TestBadFilesAtStartAreTold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpucanary", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("refresh = \"soon\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, loadErr := config.Load(path)
	if loadErr == nil {
		t.Fatal("the broken file loads")
	}
	applied := make(chan config.Config, 4)
	h := start(t, presenttest.A100, func(d *Deps) {
		d.ConfigPath, d.SettingsError = path, loadErr.Error()
		d.Reconfigure = func(c config.Config) { applied <- c }
		d.Problems = []string{"reading GPU scenario /nope.json: no such file or directory"}
	})
	h.waitFor("two notifications", func() bool { return len(h.notifications()) >= 2 })
	got := strings.Join(h.notifications(), "\n")
	for _, want := range []string{"The settings file has an error | " + loadErr.Error(), "default settings", "/nope.json"} {
		if !strings.Contains(got, want) {
			t.Errorf("notifications lack %q:\n%s", want, got)
		}
	}
	h.click(LabelSettingsError)
	if r := h.wins.requests; len(r) != 1 || r[0].Show != link.ShowSettings {
		t.Errorf("the settings error entry asked for %+v", r)
	}

	if err := config.Save(path, config.Default()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-applied:
	case <-time.After(5 * time.Second):
		t.Fatal("the mended file was not applied")
	}
	h.waitFor("the menu without the settings error", func() bool {
		_, _, items := h.host.snapshot()
		return !slices.Contains(labels(items), LabelSettingsError)
	})
	if n := len(h.notifications()); n != 2 {
		t.Errorf("%d notifications; the error at start was told again", n)
	}
}

// TestJournalWordReachesTheEngine: the windows process says a repair's
// journal was written; the tray has its engine read the journals at once
// (its polls here are an hour apart), which publishes the repair.
func TestJournalWordReachesTheEngine(t *testing.T) {
	state := t.TempDir()
	journals := filepath.Join(state, "journal")
	env := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	e := monitortest.Start(t, engine.Options{Paths: []string{env}, Journals: journals, Store: store.Open(state), Interval: time.Hour})
	h := start(t, presenttest.A100, func(d *Deps) { d.Monitor = e.M })
	penv, err := pyenv.Inspect(env)
	if err != nil {
		t.Fatal(err)
	}
	p := fixplan.Plan{Env: env, Installer: "pip", Variant: "cu124", CUDA: "12.4", Packages: []fixplan.Pin{{Name: "torch", Version: "2.5.1+cu124"}},
		Argv: []string{"/bin/sh", "-c", "echo 'ERROR: No matching distribution found for torch==2.5.1+cu124'; exit 1"}}
	res, err := fix.Run(context.Background(), p, penv, fix.RunOptions{Journal: fixjournal.NewJournal(journals, env, time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	h.tr.FromWindows(link.FromWindows{Journal: res.Journal})
	ev := e.Wait(10*time.Second, monitortest.Kind(monitor.KindRepairFailed, env))
	if ev.Repair == nil || ev.Repair.Journal != res.Journal {
		t.Errorf("REPAIR_FAILED = %+v", ev)
	}
}
