package app

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// TestWindowsFitTheScreen: at FYNE_SCALE=2 on a 1920×1080 screen with a
// 32-pixel panel the work area is 960×524 units; every window's opening
// size is cut to fit it, and one that fits is left alone.
func TestWindowsFitTheScreen(t *testing.T) {
	area := fyne.NewSize(1920/2, (1080-32)/2)
	for _, size := range []fyne.Size{procsSize, envsSize, {Width: 400, Height: 300}} {
		got := fitIn(size, area)
		if got.Width > area.Width || got.Height > area.Height {
			t.Errorf("%v in %v: %v does not fit", size, area, got)
		}
		if size.Width <= area.Width*0.95 && size.Height <= area.Height*0.9 && got != size {
			t.Errorf("%v fits %v, yet became %v", size, area, got)
		}
	}
}

// TestWindowsRememberTheirSize: a window closed at a size opens at it.
func TestWindowsRememberTheirSize(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	win := u.wins.newWindow("GPU Canary — test", fyne.NewSize(800, 600))
	u.wins.show(win)
	win.Resize(fyne.NewSize(640, 480))
	u.wins.hide(win)
	again := newUI(a, Deps{}).wins.newWindow("GPU Canary — test", fyne.NewSize(800, 600))
	if got := again.Canvas().Size(); got != fyne.NewSize(640, 480) {
		t.Errorf("opened at %v, closed at 640×480", got)
	}
}

// TestEveryWindowReachesEveryWindow: each window's menu names every
// window, so no window depends on the tray to be reached.
func TestEveryWindowReachesEveryWindow(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	win := u.wins.newWindow("GPU Canary — test", fyne.NewSize(400, 300))
	var labels []string
	for _, m := range win.MainMenu().Items {
		for _, it := range m.Items {
			if !it.IsSeparator {
				labels = append(labels, it.Label)
			}
		}
	}
	want := []string{"Environments", "GPU processes", "GPUs", "History", "Settings"}
	if len(labels) != len(want) {
		t.Fatalf("menu %v, want %v", labels, want)
	}
	for i := range want {
		if labels[i] != want[i] {
			t.Errorf("menu %v, want %v", labels, want)
		}
	}
	// Escape closes it.
	u.wins.show(win)
	win.Canvas().(test.WindowlessCanvas).OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if u.wins.visible[win] {
		t.Error("Escape did not close the window")
	}
}
