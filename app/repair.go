package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/output/plantext"
)

// Repairer plans and runs the reinstall of a CUDA torch; cmd/gpucanary
// passes monitor/fix's Service, the same repair as `gpucanary fix`.
type Repairer interface {
	Plan(ctx context.Context, env string) (fixplan.Plan, error)
	Run(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error)
}

// reinstall shows the plan, asks, then runs it with a progress dialog
// whose Cancel stops the installer's whole process group.
func (u *ui) reinstall(env string) {
	if u.d.Repair == nil {
		return
	}
	win := u.wins.host()
	u.wins.show(win)
	p, err := u.d.Repair.Plan(u.life, env)
	if errors.Is(err, fix.ErrNothingToFix) {
		// The environment was mended since the menu offered this.
		dialog.ShowInformation("Nothing to fix", wrap(err.Error()+"."), win)
		return
	}
	if err != nil {
		dialog.ShowError(err, win)
		return
	}
	if p.Blocked != "" {
		dialog.ShowInformation("Cannot reinstall", wrap(p.Blocked), win)
		return
	}
	ask := plantext.AskFor(p, env, present.ShortPath)
	title, msg := ask.Title, ask.What+"\n\n"+wrap(ask.Why)
	if len(ask.Changes) > 0 {
		msg += "\n\nWhat else changes:"
		for _, c := range ask.Changes {
			msg += "\n" + wrap("• "+c)
		}
	}
	dialog.ShowConfirm(title, msg, func(ok bool) {
		if ok {
			u.runRepair(p, win)
		}
	}, win)
}

// runRepair runs p in the background; the channel closes when the result
// has been shown.
func (u *ui) runRepair(p fixplan.Plan, win fyne.Window) <-chan struct{} {
	ctx, cancel := context.WithCancel(u.life)
	status := widget.NewLabel("Starting " + p.Installer + "…")
	status.Wrapping = fyne.TextWrapWord
	bar := widget.NewProgressBarInfinite()
	d := dialog.NewCustom("Reinstalling CUDA torch", "Cancel", container.NewVBox(status, bar), win)
	d.SetOnClosed(cancel)
	d.Resize(fyne.NewSize(560, 180))
	d.Show()
	finished := make(chan struct{})
	u.busy++ // the process stays while the installer runs, windows closed or not
	u.repairs.Add(1)
	go func() {
		defer u.repairs.Done()
		defer close(finished)
		res, err := u.d.Repair.Run(ctx, p, func(line string) {
			if s := strings.TrimSpace(line); s != "" && u.life.Err() == nil {
				fyne.Do(func() { status.SetText(human.Truncate(s, 200)) })
			}
		})
		// The log keeps every result: a dialog queued as the app shuts
		// down is never shown.
		quitting := u.life.Err() != nil
		level, msg := slog.LevelInfo, "reinstall ended"
		if quitting {
			level, msg = slog.LevelWarn, "reinstall stopped as GPU Canary quit"
		}
		u.d.Log.Log(context.Background(), level, msg, "env", p.Env, "fixed", res.Fixed, "why", res.Why, "rollback", res.Rollback, "err", err)
		if quitting {
			cancel()
			return
		}
		fyne.Do(func() {
			d.Hide()
			switch {
			case err != nil:
				dialog.ShowError(err, win)
			case res.Fixed && u.d.Guard != nil && !u.d.Guard.Guarded(p.Env):
				// The moment to keep it: the next install may undo this.
				u.offerKeep(p.Env, fmt.Sprintf("torch is now %s, verified by reading the environment again.\nJournal: %s\n\n", res.After["torch"], res.Journal), win)
			case res.Fixed:
				dialog.ShowInformation("Reinstalled", fmt.Sprintf("torch is now %s, verified by reading the environment again.\nJournal: %s", res.After["torch"], res.Journal), win)
			default:
				dialog.ShowInformation("Not fixed", notFixedText(res), win)
			}
			cancel()
			u.busy--
			u.checkIdle()
		})
	}()
	return finished
}

// notFixedText explains a repair that did not fix: why, in the
// installer's own words when it failed, and how to put back what was
// there, only when the run changed something (fix gives a rollback then).
func notFixedText(res fixjournal.Result) string {
	text := wrap("Not fixed: " + res.Why + ".")
	if len(res.Cause) > 0 {
		text += "\n\nThe installer said:"
		for _, l := range res.Cause {
			text += "\n" + wrap(human.Truncate(l, 400))
		}
	}
	if res.Rollback != "" {
		text += "\n\n" + wrap("To put back what was there before ("+versionsText(res.Before)+"):") + "\n" + res.Rollback
	}
	if res.Journal != "" {
		text += "\n\nJournal: " + res.Journal
	}
	return text
}

// versionsText is "torch 2.5.1+cpu, torchvision 0.20.1+cpu".
func versionsText(v map[string]string) string {
	var parts []string
	for _, n := range []string{"torch", "torchvision", "torchaudio"} {
		if s, ok := v[n]; ok {
			parts = append(parts, n+" "+s)
		}
	}
	return strings.Join(parts, ", ")
}

// wrap breaks long text for dialogs, which do not wrap by themselves.
func wrap(s string) string {
	var out strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+len(w) > 80 {
			out.WriteString("\n")
			n = 0
		} else if n > 0 {
			out.WriteString(" ")
			n++
		}
		out.WriteString(w)
		n += len(w)
	}
	return out.String()
}

// stopRepairsWait bounds how long shutdown waits for cancelled repairs:
// less than the tray process waits for this one (link.closeGrace).
var stopRepairsWait = 4 * time.Second

// stopRepairs cancels the repairs still running, which stops their
// installers' process groups, and waits for them a bounded while, so an
// installer is not left running with no one to report on it.
func (u *ui) stopRepairs() {
	u.end()
	done := make(chan struct{})
	go func() { u.repairs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopRepairsWait):
		u.d.Log.Warn("a reinstall had not stopped when GPU Canary quit")
	}
}
