//go:build e2e

package e2e

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// drawMenu saves a picture of the tray menu as the app published it over
// dbusmenu, drawn by Fyne's menu widget: Xvfb has no panel to open the
// real one, so the items, their order, separators, disabled state and the
// submenu of the first broken environment come from the live bus and only
// the drawing is Fyne's.
func drawMenu(t *testing.T, nodes []menuNode, name string) {
	dir := os.Getenv("GPUCANARY_SCREENSHOTS")
	if dir == "" {
		return
	}
	a := test.NewTempApp(t)
	var open []menuNode
	for _, n := range nodes {
		if strings.Contains(n.Label, "✗") && len(n.Children) > 0 && open == nil {
			open = n.Children
		}
	}
	top := widget.NewMenu(fyneMenu(nodes))
	objs := []fyne.CanvasObject{top}
	if open != nil {
		objs = append(objs, container.NewVBox(widget.NewMenu(fyneMenu(open))))
	}
	w := a.NewWindow("tray menu")
	w.SetPadded(false)
	w.SetContent(container.NewHBox(container.NewVBox(objs[0]), container.NewVBox(objs[1:]...)))
	w.Resize(w.Content().MinSize())
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Logf("saving the menu picture: %v", err)
		return
	}
	defer f.Close()
	if err := png.Encode(f, w.Canvas().Capture()); err != nil {
		t.Logf("saving the menu picture: %v", err)
	}
}

func fyneMenu(nodes []menuNode) *fyne.Menu {
	var items []*fyne.MenuItem
	for _, n := range nodes {
		if n.Separator {
			items = append(items, fyne.NewMenuItemSeparator())
			continue
		}
		it := fyne.NewMenuItem(n.Label, func() {})
		it.Disabled = n.Disabled
		if len(n.Children) > 0 {
			it.ChildMenu = fyneMenu(n.Children)
		}
		items = append(items, it)
	}
	return fyne.NewMenu("", items...)
}
