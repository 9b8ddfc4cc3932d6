package app

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/link"
)

type fakeGuarder struct {
	set []string
	err error
}

func (f *fakeGuarder) Guard(env string) ([]string, []string, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	f.set = append(f.set, env)
	return []string{"torch==2.5.1+cu121"}, []string{"wrote " + env + "/gpucanary-constraints.txt"}, nil
}

func (f *fakeGuarder) Guarded(string) bool { return false }

// button finds the dialog button labelled text over win.
func button(win fyne.Window, text string) *widget.Button {
	top := win.Canvas().Overlays().Top()
	if top == nil {
		return nil
	}
	b, _ := find(top, func(o fyne.CanvasObject) bool { b, ok := o.(*widget.Button); return ok && b.Text == text }).(*widget.Button)
	return b
}

// TestKeepRequest is the tray's "Keep this CUDA build…": a dialog says
// what the guard writes and asks; "Keep it" sets the guard and says what
// it keeps; a refusal is shown with its reason.
func TestKeepRequest(t *testing.T) {
	u := newTestUI(t, a100)
	g := &fakeGuarder{}
	u.d.Guard = g
	u.handle(link.Request{Keep: u.paths[0]})
	win := u.wins.host()
	keep := button(win, "Keep it")
	if keep == nil {
		t.Fatal("no dialog asking to keep the build")
	}
	test.Tap(keep)
	if len(g.set) != 1 || g.set[0] != u.paths[0] {
		t.Fatalf("guard set on %v", g.set)
	}
	if find(win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		return ok && strings.Contains(l.Text, "torch==2.5.1+cu121") && strings.Contains(l.Text, "gpucanary unguard")
	}) == nil {
		t.Error("no dialog saying what is kept")
	}

	g.err = errors.New("cannot guard x: its torch is a CPU build")
	u.handle(link.Request{Keep: u.paths[1]})
	test.Tap(button(win, "Keep it"))
	if find(win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		return ok && strings.Contains(l.Text, "CPU build")
	}) == nil {
		t.Error("the refusal is not shown")
	}
}
