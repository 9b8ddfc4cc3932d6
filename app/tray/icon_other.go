//go:build !windows

package tray

// platformIcon is the icon in the form systray takes: PNG.
func platformIcon(png []byte) []byte { return png }

// platformTooltip is the tooltip as systray takes it: a StatusNotifierItem
// has no length limit.
func platformTooltip(text string) string { return text }
