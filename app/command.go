package app

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// commandText shows a command a person may copy: monospace, wrapped at
// spaces only. Fyne's word wrap cuts inside a word that does not fit on
// a line ("ins tall", "https ://"); here the text is never narrower than
// its longest word (which sets how narrow the pane holding it may be),
// so no word has to be cut. The text can be selected; the Copy button
// beside it copies the whole command.
func commandText(cmd string) fyne.CanvasObject {
	l := widget.NewLabelWithStyle(cmd, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	l.Wrapping = fyne.TextWrapWord
	l.Selectable = true
	return container.New(&atLeastWide{width: longestWord(cmd, l.TextStyle) + 2*theme.InnerPadding()}, l)
}

// longestWord is the width of the widest space-separated word of s, in
// style, at the theme's text size (plus a pixel, against rounding).
func longestWord(s string, style fyne.TextStyle) float32 {
	var w float32
	for _, word := range strings.Fields(s) {
		w = max(w, fyne.MeasureText(word, theme.TextSize(), style).Width)
	}
	return w + 1
}

// atLeastWide gives its one object a minimum width, and its own height
// at the width it is given (a wrapped label's).
type atLeastWide struct{ width float32 }

func (l *atLeastWide) MinSize(objects []fyne.CanvasObject) fyne.Size {
	m := objects[0].MinSize()
	return fyne.NewSize(max(m.Width, l.width), m.Height)
}

func (l *atLeastWide) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	objects[0].Move(fyne.NewPos(0, 0))
	objects[0].Resize(size)
}
