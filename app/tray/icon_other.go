//go:build !windows

package tray

// platformIcon is the icon in the form systray takes: PNG.
func platformIcon(png []byte) []byte { return png }
