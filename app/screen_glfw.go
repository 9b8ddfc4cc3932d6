//go:build !wasm && !test_web_driver

package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver"
	"github.com/go-gl/glfw/v3.3/glfw"
)

// workArea is the primary screen less its panels and task bar, in
// win's units (screen pixels over its canvas's scale), once win is on a
// real screen; ok is false where it cannot be known (Fyne's test driver,
// an error from the windowing system). It runs on the main thread, as
// GLFW requires: every caller is a UI callback.
func workArea(win fyne.Window) (area fyne.Size, ok bool) {
	nw, native := win.(driver.NativeWindow)
	if !native {
		return fyne.Size{}, false
	}
	var w, h int
	nw.RunNative(func(ctx any) {
		switch ctx.(type) {
		case driver.X11WindowContext, driver.WaylandWindowContext, driver.WindowsWindowContext:
		default:
			return // macOS sizes windows in points; no NVIDIA GPU there anyway
		}
		defer func() { _ = recover() }() // go-gl's glfw panics on a GLFW error
		if m := glfw.GetPrimaryMonitor(); m != nil {
			_, _, w, h = m.GetWorkarea()
		}
	})
	scale := win.Canvas().Scale()
	if w <= 0 || h <= 0 || scale <= 0 {
		return fyne.Size{}, false
	}
	return fyne.NewSize(float32(w)/scale, float32(h)/scale), true
}
