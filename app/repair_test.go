package app

import (
	"context"
	"net/http/httptest"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// texts are the texts of the labels under o, each on one line.
func texts(o fyne.CanvasObject) []string {
	var out []string
	find(o, func(c fyne.CanvasObject) bool {
		if l, ok := c.(*widget.Label); ok {
			out = append(out, strings.ReplaceAll(l.Text, "\n", " "))
		}
		return false
	})
	return out
}

// has reports whether a label under o contains s.
func has(o fyne.CanvasObject, s string) bool {
	return slices.ContainsFunc(texts(o), func(t string) bool { return strings.Contains(t, s) })
}

// buttonIn is the button labelled text under o, or nil.
func buttonIn(o fyne.CanvasObject, text string) *widget.Button {
	b, _ := find(o, func(c fyne.CanvasObject) bool { b, ok := c.(*widget.Button); return ok && b.Text == text }).(*widget.Button)
	return b
}

// settle waits until no repair runs in the background: Fyne's test
// driver runs fyne.Do on the calling goroutine, so a test looks at the
// dialogs only once the repair that draws them is done.
func settle(u *ui) { u.repairs.Wait() }

// waitDialog waits for a dialog over win that has a label containing s.
func waitDialog(t *testing.T, win fyne.Window, s string, d time.Duration) fyne.CanvasObject {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var top fyne.CanvasObject
		fyne.DoAndWait(func() { top = win.Canvas().Overlays().Top() })
		if top != nil && has(top, s) {
			return top
		}
		if time.Now().After(deadline) {
			var seen []string
			if top != nil {
				seen = texts(top)
			}
			t.Fatalf("no dialog saying %q within %v; the top one says %q", s, d, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRepairButtonBesideTheFinding: the Environments window offers
// "Repair…" beside the finding a reinstall fixes, and only there; it
// runs the tray's repair flow: a dialog that says in one sentence what
// happens, left-aligned, with the reasons and the exact command under
// Details, and no flag of the command line.
func TestRepairButtonBesideTheFinding(t *testing.T) {
	u := newTestUI(t, a100)
	rep := &fakeRepairer{ran: make(chan fixplan.Plan, 1), release: make(chan struct{})}
	u.d.Repair = rep
	u.handle(link.Request{Show: link.ShowEnvs, Env: u.paths[0]})
	if buttonIn(u.wins.envs.detail, LabelRepairButton) != nil {
		t.Error("the healthy environment offers a repair")
	}
	u.wins.envs.selectEnv(u.paths[1])
	b := buttonIn(u.wins.envs.detail, LabelRepairButton)
	if b == nil {
		t.Fatalf("no %q beside the broken environment's finding; the detail says %q", LabelRepairButton, texts(u.wins.envs.detail))
	}
	test.Tap(b)
	win := u.wins.envs.win
	top := win.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog")
	}
	p, _ := rep.Plan(context.Background(), u.paths[1])
	if !has(top, "Install torch 2.10.0+cu128 (CUDA 12.8) in "+u.paths[1]+" from the PyTorch index with this environment's pip.") {
		t.Errorf("the dialog does not say in one sentence what happens: %q", texts(top))
	}
	for _, l := range texts(top) {
		for _, jargon := range []string{"--force", "`", "--no-deps"} {
			if strings.Contains(l, jargon) && l != p.Command() {
				t.Errorf("the dialog says %q outside the command: %q", jargon, l)
			}
		}
	}
	acc, _ := find(top, func(o fyne.CanvasObject) bool { _, ok := o.(*widget.Accordion); return ok }).(*widget.Accordion)
	if acc == nil || len(acc.Items) != 1 || acc.Items[0].Title != labelDetails {
		t.Fatalf("no Details expander: %+v", acc)
	}
	if acc.Items[0].Open {
		t.Error("Details is open before it is asked for")
	}
	if !has(acc.Items[0].Detail, p.Command()) || !has(acc.Items[0].Detail, "torch 2.10.0 is a CPU build. The driver runs CUDA 12.8.") {
		t.Errorf("Details holds %q, want the reasons and %q", texts(acc.Items[0].Detail), p.Command())
	}
	test.Tap(buttonIn(acc.Items[0].Detail, "Copy command"))
	if *u.clip != p.Command() {
		t.Errorf("copied %q", *u.clip)
	}
	for _, l := range []*widget.Label{find(top, func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		return ok && strings.HasPrefix(l.Text, "Install torch")
	}).(*widget.Label)} {
		if l.Alignment != fyne.TextAlignLeading || l.Wrapping != fyne.TextWrapWord {
			t.Error("the sentence is not left-aligned and wrapped at words")
		}
	}
	if buttonIn(top, labelRepairAnyway) != nil || buttonIn(top, labelStopAndRepair) != nil || buttonIn(top, labelStopItAndRepair) != nil {
		t.Error("offers to repair anyway with no process in the way")
	}
	test.Tap(buttonIn(top, labelRepair))
	select {
	case got := <-rep.ran:
		if got.Env != u.paths[1] || len(rep.anyway) != 0 {
			t.Errorf("ran %+v (anyway %v)", got, rep.anyway)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Repair did not run the repair")
	}
	close(rep.release)
	settle(u.ui)
	waitDialog(t, win, "torch 2.10.0+cu128 in", 5*time.Second)
	if u.wins.envs.selected != u.paths[1] {
		t.Errorf("the window selects %q after the repair, want %q", u.wins.envs.selected, u.paths[1])
	}
}

// TestRepairFromTheTraySelectsTheEnvironment: the tray's "Reinstall CUDA
// torch…" and a notification's Repair select the environment repaired,
// not the first one listed.
func TestRepairFromTheTraySelectsTheEnvironment(t *testing.T) {
	u := newTestUI(t, a100)
	u.d.Repair = &fakeRepairer{}
	u.handle(link.Request{Repair: u.paths[1]})
	if u.wins.envs.selected != u.paths[1] {
		t.Errorf("selected %q, want the environment repaired, %q", u.wins.envs.selected, u.paths[1])
	}
}

// TestProcessesAreNamedBeforeYes: processes that run from the
// environment are named in the first dialog, by name and PID, which then
// offers to stop them (after a second question) or to repair anyway,
// and never a plain Yes.
func TestProcessesAreNamedBeforeYes(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	u := newTestUI(t, a100)
	started := time.Now().Add(-time.Minute).Truncate(time.Second)
	job := procs.Proc{PID: 4242, Name: "python", User: me.Username, Cmdline: []string{"python", "train.py"}, StartTime: started}
	rep := &fakeRepairer{ran: make(chan fixplan.Plan, 1), release: make(chan struct{}),
		inUse: &fix.InUseError{Env: u.paths[1], Processes: []string{"PID 4242 (python train.py)"}, Procs: []procs.Proc{job}}}
	close(rep.release)
	u.d.Repair = rep
	var stopped []int
	u.d.Terminate = func(pid int, start time.Time) error {
		if !start.Equal(started) {
			t.Errorf("terminate PID %d started %v, want %v", pid, start, started)
		}
		stopped = append(stopped, pid)
		rep.inUse = nil // it ended
		return nil
	}
	u.handle(link.Request{Repair: u.paths[1]})
	win := u.wins.envs.win
	top := win.Canvas().Overlays().Top()
	if !has(top, "1 process runs from this environment") || !has(top, "python (PID 4242)") {
		t.Errorf("the dialog does not name the process: %q", texts(top))
	}
	if buttonIn(top, labelRepair) != nil || buttonIn(top, labelRepairAnyway) == nil || buttonIn(top, labelStopItAndRepair) == nil {
		t.Fatal("the dialog does not offer Stop it and repair and Repair anyway (and only those)")
	}
	test.Tap(buttonIn(top, labelStopItAndRepair))
	if len(stopped) != 0 {
		t.Fatal("stopped before the second question")
	}
	second := win.Canvas().Overlays().Top()
	if !has(second, "GPU Canary asks 1 process to end") || !has(second, "python (PID 4242)") {
		t.Errorf("the second question says %q", texts(second))
	}
	test.Tap(buttonIn(second, "Stop and repair"))
	select {
	case <-rep.ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the repair did not run once the process ended")
	}
	settle(u.ui)
	if !slices.Equal(stopped, []int{4242}) || len(rep.anyway) != 0 {
		t.Errorf("stopped %v, anyway %v", stopped, rep.anyway)
	}

	// Repair anyway runs with the processes left alone.
	rep.inUse = &fix.InUseError{Env: u.paths[1], Procs: []procs.Proc{job, {PID: 4343, Name: "jupyter", User: "someone-else"}}}
	stopped = nil
	u.handle(link.Request{Repair: u.paths[1]})
	top = waitDialog(t, win, "2 processes run from this environment", 5*time.Second)
	if buttonIn(top, labelStopAndRepair) != nil || buttonIn(top, labelStopItAndRepair) != nil {
		t.Error("offers to stop another user's process")
	}
	test.Tap(buttonIn(top, labelRepairAnyway))
	select {
	case <-rep.ran:
	case <-time.After(5 * time.Second):
		t.Fatal("Repair anyway did not run")
	}
	settle(u.ui)
	if len(rep.anyway) != 1 || len(stopped) != 0 {
		t.Errorf("anyway %v, stopped %v", rep.anyway, stopped)
	}
}

// TestResultDialogs: a repair says what changed, before → after, with
// Undo and Show log (the journal's folder); one that did not fix is drawn
// with the error icon.
func TestResultDialogs(t *testing.T) {
	u := newTestUI(t, a100)
	var opened []string
	u.d.OpenFolder = func(p string) error { opened = append(opened, p); return nil }
	journal := "/state/gpucanary/journal/20250101T000000.000Z-llm.jsonl"
	rep := &fakeRepairer{ran: make(chan fixplan.Plan, 1), release: make(chan struct{}),
		result: &fixjournal.Result{Fixed: true, Before: map[string]string{"torch": "2.10.0+cpu"}, After: map[string]string{"torch": "2.10.0+cu128"},
			Rollback: "pip install torch==2.10.0+cpu", Journal: journal}}
	close(rep.release)
	u.d.Repair = rep
	u.handle(link.Request{Repair: u.paths[1]})
	win := u.wins.envs.win
	test.Tap(dialogButton(t, win, labelRepair))
	<-rep.ran
	settle(u.ui)
	top := waitDialog(t, win, "torch 2.10.0+cpu → 2.10.0+cu128 in "+u.paths[1], 5*time.Second)
	for _, l := range texts(top) {
		if strings.Contains(l, "`") || strings.Contains(l, "jsonl") {
			t.Errorf("the dialog says %q", l)
		}
	}
	test.Tap(buttonIn(top, labelShowLog))
	if !slices.Equal(opened, []string{filepath.Dir(journal)}) {
		t.Errorf("Show log opened %q", opened)
	}
	test.Tap(buttonIn(top, labelUndo))
	undo := waitDialog(t, win, "Put back torch 2.10.0+cpu in "+u.paths[1], 5*time.Second)
	if buttonIn(undo, labelUndo) == nil {
		t.Fatal("the undo's dialog has no Undo button")
	}

	failed := fixjournal.Result{Why: "the installer failed with exit status 1", Before: map[string]string{"torch": "2.10.0+cpu"}}
	u.showResult(fixplan.Plan{Env: u.paths[1]}, failed, nil, win)
	top = waitDialog(t, win, "Not fixed: the installer failed", time.Second)
	if find(top, func(o fyne.CanvasObject) bool {
		i, ok := o.(*widget.Icon)
		return ok && i.Resource != nil && i.Resource.Name() == theme.ErrorIcon().Name()
	}) == nil {
		t.Error("Not fixed is not drawn with the error icon")
	}
}

// TestUndoPutsBackWhatTheRepairReplaced runs the windows' flow on a real
// venv with real pip from a local index: Repair installs the CUDA torch,
// and the success dialog's Undo (asked, then run as any repair) puts the
// CPU build back, which the dialog and the disk say.
func TestUndoPutsBackWhatTheRepairReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("installs real wheels with pip")
	}
	py := wheeltest.Python(t)
	idx := wheeltest.NewIndex(t.TempDir())
	for tag, s := range map[string]wheeltest.Spec{"cpu": wheeltest.Torch("2.5.1", "cpu"), "cu124": wheeltest.Torch("2.5.1", "cu124")} {
		if err := idx.Add(tag, s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", srv.URL+"/cpu", "torch==2.5.1+cpu")
	t.Setenv("PIP_NO_CACHE_DIR", "1")
	t.Setenv("PIP_CONFIG_FILE", "/dev/null")
	t.Setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
	gpuA100 := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	svc := fix.Service{GPU: func(context.Context) gpu.State { return gpuA100 }, IndexBase: func() string { return srv.URL }, JournalDir: t.TempDir()}

	u := newTestUI(t, a100)
	u.d.Repair = svc
	u.handle(link.Request{Repair: venv})
	win := u.wins.envs.win
	waitDialog(t, win, "(CUDA 12.4) in "+venv, 5*time.Second)
	test.Tap(dialogButton(t, win, labelRepair))
	settle(u.ui)
	done := waitDialog(t, win, "torch 2.5.1+cpu → 2.5.1+cu124", 5*time.Second)
	torch := func() string {
		env, err := pyenv.Inspect(venv)
		if err != nil || env.Torch() == nil {
			t.Fatalf("reading %s: %v", venv, err)
		}
		return env.Torch().Version
	}
	if v := torch(); v != "2.5.1+cu124" {
		t.Fatalf("after the repair torch is %s", v)
	}
	test.Tap(buttonIn(done, labelUndo))
	waitDialog(t, win, "Put back torch 2.5.1+cpu in "+venv, 5*time.Second)
	test.Tap(dialogButton(t, win, labelUndo))
	settle(u.ui)
	waitDialog(t, win, "torch 2.5.1+cu124 → 2.5.1+cpu in "+venv+", as before the repair", 5*time.Second)
	if v := torch(); v != "2.5.1+cpu" {
		t.Errorf("after Undo torch is %s, want 2.5.1+cpu", v)
	}
}
