package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/output/plantext"
	"github.com/gpucanary/gpucanary/output/words"
)

// Repairer plans and runs the reinstall of a CUDA torch; cmd/gpucanary
// passes monitor/fix's Service, the same repair as `gpucanary fix`.
type Repairer interface {
	Plan(ctx context.Context, env string) (fixplan.Plan, error)
	// InUse is a *fix.InUseError naming the processes that run from env
	// now, or nil: the dialog names them before it asks.
	InUse(ctx context.Context, env string) error
	// Run refuses while processes run from the environment; RunAnyway
	// runs all the same (`gpucanary fix --force`).
	Run(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error)
	RunAnyway(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error)
}

// Button labels of the repair's dialogs (the tests press them).
const (
	labelRepair          = "Repair"
	labelRepairAnyway    = "Repair anyway"
	labelStopAndRepair   = "Stop them and repair"
	labelStopItAndRepair = "Stop it and repair" // one process
	labelUndo            = "Undo"
	labelShowLog         = "Show log"
	labelDetails         = "Details"
)

// dialogWidth is the width the repair's dialogs open at: their text wraps
// at it, left-aligned, rather than at hard line breaks.
const dialogWidth = 620

// stopWait bounds how long "Stop them and repair" waits for the
// processes to end before it asks again.
var stopWait = 10 * time.Second

// reinstall shows the Environments window on env, plans, asks, then runs
// the plan with a progress dialog whose Cancel stops the installer's
// whole process group. The tray's menu, a notification's Repair and the
// window's Repair… button all come here.
func (u *ui) reinstall(env string) {
	if u.d.Repair == nil {
		return
	}
	u.wins.showEnvs()
	u.wins.envs.selectEnv(env)
	win := u.wins.envs.win
	p, err := u.d.Repair.Plan(u.life, env)
	if errors.Is(err, fix.ErrNothingToFix) {
		// The environment was mended since the menu offered this.
		showText("Nothing to fix", sentence(err.Error()), theme.InfoIcon(), win)
		return
	}
	if err != nil {
		showText("Cannot reinstall", sentence(err.Error()), theme.ErrorIcon(), win)
		return
	}
	if p.Blocked != "" {
		showText("Cannot reinstall", p.Blocked+".", theme.WarningIcon(), win)
		return
	}
	u.ask(p, win)
}

// ask shows what p will do in one sentence, with a Details expander
// holding why and the exact command. When processes run from the
// environment it names them before anything is pressed, and offers to
// stop them first or to repair anyway.
func (u *ui) ask(p fixplan.Plan, win fyne.Window) {
	a := plantext.AskFor(p, p.Env, present.ShortPath)
	objs := []fyne.CanvasObject{para(a.Sentence)}
	var inUse *fix.InUseError
	errors.As(u.d.Repair.InUse(u.life, p.Env), &inUse)
	if inUse != nil {
		objs = append(objs, para(inUseText(inUse)))
		objs = append(objs, procList(inUse.Procs)...)
	}
	objs = append(objs, details(a, u.d.Clipboard))
	var d *dialog.CustomDialog
	cancel := widget.NewButton("Cancel", func() { d.Hide() })
	buttons := []fyne.CanvasObject{cancel}
	if inUse == nil {
		ok := widget.NewButton(labelRepair, func() { d.Hide(); u.runRepair(p, win, false) })
		if p.Undoes != "" {
			ok.SetText(labelUndo)
		}
		ok.Importance = widget.HighImportance
		buttons = append(buttons, ok)
	} else {
		anyway := widget.NewButton(labelRepairAnyway, func() { d.Hide(); u.runRepair(p, win, true) })
		buttons = append(buttons, anyway)
		if mine := ownProcs(inUse.Procs); len(mine) == len(inUse.Procs) {
			stop := widget.NewButton(stopLabel(len(mine)), func() { d.Hide(); u.confirmStop(p, mine, win) })
			stop.Importance = widget.HighImportance
			buttons = append(buttons, stop)
		}
	}
	d = dialog.NewCustomWithoutButtons(a.Title, container.NewVBox(objs...), win)
	d.SetButtons(buttons)
	d.Resize(fyne.NewSize(dialogWidth, d.MinSize().Height))
	d.Show()
}

// stopLabel is the button that stops n processes, then repairs.
func stopLabel(n int) string {
	if n == 1 {
		return labelStopItAndRepair
	}
	return labelStopAndRepair
}

// inUseText says which processes run from the environment, and why that
// matters, before the person chooses.
func inUseText(e *fix.InUseError) string {
	n := len(e.Procs)
	if n == 1 {
		return "1 process runs from this environment and holds torch open. Replacing torch under it can make it fail in ways that look like bugs of its own:"
	}
	return fmt.Sprintf("%s run from this environment and hold torch open. Replacing torch under them can make them fail in ways that look like bugs of their own:",
		capital(words.Count(n, "process", "processes")))
}

// procList is one line a process: its name, PID and command.
func procList(ps []procs.Proc) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	for _, p := range ps {
		l := widget.NewLabel(fmt.Sprintf("• %s (PID %d): %s", p.Name, p.PID, human.Shorten(p.Command(), 70)))
		l.Wrapping = fyne.TextWrapWord
		out = append(out, l)
	}
	return out
}

// ownProcs are the processes of ps this user may stop.
func ownProcs(ps []procs.Proc) []procs.Proc {
	me, err := user.Current()
	var out []procs.Proc
	for _, p := range ps {
		if err == nil && p.User == me.Username {
			out = append(out, p)
		}
	}
	return out
}

// confirmStop asks a second time before stopping ps (each is asked to
// end, as Ctrl-C or closing its window would), then repairs once they
// are gone; processes that do not end are asked about again.
func (u *ui) confirmStop(p fixplan.Plan, ps []procs.Proc, win fyne.Window) {
	text := fmt.Sprintf("GPU Canary asks %s to end. Work they have not saved is lost.", words.Count(len(ps), "process", "processes"))
	objs := []fyne.CanvasObject{para(text)}
	objs = append(objs, procList(ps)...)
	d := dialog.NewCustomConfirm("Stop "+words.Count(len(ps), "process", "processes")+"?", "Stop and repair", "Cancel", container.NewVBox(objs...), func(ok bool) {
		if !ok {
			return
		}
		var failed []string
		for _, pr := range ps {
			if err := u.d.Terminate(pr.PID, pr.StartTime); err != nil {
				failed = append(failed, err.Error())
			}
		}
		u.d.Log.Info("stopping processes before a repair", "env", p.Env, "processes", len(ps), "failed", failed)
		u.afterStop(p, win)
	}, win)
	d.Resize(fyne.NewSize(dialogWidth, d.MinSize().Height))
	d.Show()
}

// afterStop waits, off Fyne's goroutine, until no process runs from the
// environment (or stopWait passes), then runs the repair, or asks again.
func (u *ui) afterStop(p fixplan.Plan, win fyne.Window) {
	u.busy++
	u.repairs.Add(1) // a repair on its way, which quitting waits for too
	go func() {
		defer u.repairs.Done()
		deadline := time.Now().Add(stopWait)
		free := false
		for u.life.Err() == nil && time.Now().Before(deadline) {
			if u.d.Repair.InUse(u.life, p.Env) == nil {
				free = true
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if u.life.Err() != nil {
			return
		}
		fyne.Do(func() {
			u.busy--
			if free {
				u.runRepair(p, win, false)
			} else {
				u.ask(p, win) // names what still runs
			}
		})
	}()
}

// details is the Details expander: why, what else changes, and the exact
// command with a button that copies it.
func details(a plantext.Ask, clip func(string)) fyne.CanvasObject {
	var objs []fyne.CanvasObject
	if a.Why != "" {
		objs = append(objs, para(a.Why))
	}
	for _, c := range a.Changes {
		objs = append(objs, para("• "+c))
	}
	if a.Command != "" {
		cmd := a.Command
		objs = append(objs, commandText(cmd), container.NewHBox(widget.NewButton("Copy command", func() { clip(cmd) })))
	}
	return widget.NewAccordion(widget.NewAccordionItem(labelDetails, container.NewVBox(objs...)))
}

// para is a paragraph of a dialog: wrapped at words, left-aligned.
func para(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// showText shows text beside icon in a dialog with a Close button.
func showText(title, text string, icon fyne.Resource, win fyne.Window, more ...fyne.CanvasObject) *dialog.CustomDialog {
	body := container.NewVBox(append([]fyne.CanvasObject{para(text)}, more...)...)
	content := container.NewBorder(nil, nil, container.NewVBox(widget.NewIcon(icon)), nil, body)
	d := dialog.NewCustom(title, "Close", content, win)
	d.Resize(fyne.NewSize(dialogWidth, d.MinSize().Height))
	d.Show()
	return d
}

// runRepair runs p in the background (anyway: while processes run from
// the environment); the channel closes when the result has been shown.
func (u *ui) runRepair(p fixplan.Plan, win fyne.Window, anyway bool) <-chan struct{} {
	ctx, cancel := context.WithCancel(u.life)
	status := widget.NewLabel("Starting " + p.Installer + "…")
	status.Wrapping = fyne.TextWrapWord
	bar := widget.NewProgressBarInfinite()
	title := "Reinstalling CUDA torch"
	if p.Undoes != "" {
		title = "Undoing the repair"
	}
	d := dialog.NewCustom(title, "Cancel", container.NewVBox(status, bar), win)
	d.SetOnClosed(cancel)
	d.Resize(fyne.NewSize(560, 180))
	d.Show()
	finished := make(chan struct{})
	u.busy++ // the process stays while the installer runs, windows closed or not
	u.repairs.Add(1)
	run := u.d.Repair.Run
	if anyway {
		run = u.d.Repair.RunAnyway
	}
	go func() {
		defer u.repairs.Done()
		defer close(finished)
		res, err := run(ctx, p, func(line string) {
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
		u.d.Log.Log(context.Background(), level, msg, "env", p.Env, "undo", p.Undoes != "", "fixed", res.Fixed, "why", res.Why, "rollback", res.Rollback, "err", err)
		if quitting {
			cancel()
			return
		}
		fyne.Do(func() {
			d.Hide()
			u.showResult(p, res, err, win)
			cancel()
			u.busy--
			u.checkIdle()
		})
	}()
	return finished
}

// showResult says how the run of p ended, and selects its environment.
func (u *ui) showResult(p fixplan.Plan, res fixjournal.Result, err error, win fyne.Window) {
	if u.wins.envs != nil {
		u.wins.envs.selectEnv(p.Env)
	}
	var inUse *fix.InUseError
	switch {
	case errors.As(err, &inUse):
		// Started since the dialog asked: ask again, naming them.
		u.ask(p, win)
	case err != nil:
		showText("Not fixed", sentence(err.Error()), theme.ErrorIcon(), win)
	case res.Fixed && p.Undoes != "":
		showText("Undone", fmt.Sprintf("%s in %s, as before the repair, checked by reading the environment again.",
			changeText(res.Before, res.After), present.ShortPath(p.Env)), theme.ConfirmIcon(), win, u.resultButtons(p, res, win)...)
	case res.Fixed:
		var keep fyne.CanvasObject
		if u.d.Guard != nil && !u.d.Guard.Guarded(p.Env) {
			// The moment to keep it: the next install may undo this.
			env := p.Env
			keep = widget.NewButton("Keep this CUDA build…", func() { u.offerKeep(env, "", win) })
		}
		showText("Repaired", fmt.Sprintf("%s in %s, checked by reading the environment again.",
			changeText(res.Before, res.After), present.ShortPath(p.Env)), theme.ConfirmIcon(), win, u.resultButtons(p, res, win, keep)...)
	default:
		showText("Not fixed", notFixedText(res), theme.ErrorIcon(), win, u.resultButtons(p, res, win)...)
	}
}

// resultButtons are "Undo" (when the run can be taken back) and "Show
// log" (the journal's folder, in the file manager), then more, in a row.
func (u *ui) resultButtons(p fixplan.Plan, res fixjournal.Result, win fyne.Window, more ...fyne.CanvasObject) []fyne.CanvasObject {
	row := container.NewHBox()
	if undo, ok := fix.UndoPlan(p, res); ok {
		row.Add(widget.NewButton(labelUndo, func() { u.ask(undo, win) }))
	}
	if res.Journal != "" {
		dir := filepath.Dir(res.Journal)
		row.Add(widget.NewButton(labelShowLog, func() {
			if err := u.d.OpenFolder(dir); err != nil {
				showText("The log was not opened", sentence(err.Error()), theme.ErrorIcon(), win)
			}
		}))
	}
	for _, b := range more {
		if b != nil {
			row.Add(b)
		}
	}
	if len(row.Objects) == 0 {
		return nil
	}
	return []fyne.CanvasObject{row}
}

// changeText is "torch 2.5.1+cpu → 2.5.1+cu124, torchvision …", or what
// is installed now when nothing changed.
func changeText(before, after map[string]string) string {
	var parts []string
	for _, n := range []string{"torch", "torchvision", "torchaudio"} {
		b, hadB := before[n]
		a, hasA := after[n]
		switch {
		case hadB && hasA && a != b:
			parts = append(parts, n+" "+b+" → "+a)
		case hasA:
			parts = append(parts, n+" "+a)
		case hadB:
			parts = append(parts, n+" "+b+" → not installed")
		}
	}
	return capital(strings.Join(parts, ", "))
}

// notFixedText explains a repair that did not fix: why, in the
// installer's own words when it failed, and what is installed now.
// Taking back what it changed is its dialog's Undo.
func notFixedText(res fixjournal.Result) string {
	text := "Not fixed: " + res.Why + "."
	if len(res.Cause) > 0 {
		text += "\n\nThe installer said:"
		for _, l := range res.Cause {
			text += "\n" + human.Truncate(l, 400)
		}
	}
	if res.Rollback != "" && len(res.Before) > 0 {
		text += "\n\nBefore the repair: " + versionsText(res.Before) + "."
	}
	return text
}

// sentence is s with a capital and a final stop.
func sentence(s string) string {
	s = capital(strings.TrimSpace(s))
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// capital is s with its first letter upper-case ("torch" stays: a
// package's name is written as it is).
func capital(s string) string {
	if s == "" || strings.HasPrefix(s, "torch") {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
