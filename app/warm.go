package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// warmStyles are the text styles every window's first frame draws: its
// labels, and the badges' and headings' bold. (The fix commands'
// monospace is drawn only for some environments; it loads when needed.)
var warmStyles = []fyne.TextStyle{{}, {Bold: true}}

// warmFonts has Fyne load the fonts of warmStyles: it parses each
// style's font files (the theme's, the emoji font, the system's font
// for the language, found through a scan of the system's fonts) the
// first time text in that style is measured, about 30 ms of a window's
// first frame on a small machine. Run on another goroutine while the
// driver starts on the main one, that is paid on the second core; it
// must end before the main goroutine measures or draws text, since a
// loaded font face is not safe for concurrent use.
func warmFonts() {
	for _, s := range warmStyles {
		fyne.MeasureText("GPU Canary", theme.TextSize(), s)
	}
}
