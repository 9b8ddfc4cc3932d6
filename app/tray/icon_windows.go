//go:build windows

package tray

// platformIcon wraps png in an ICO container, the form the Windows
// notification area takes (ICO may hold PNG data since Windows Vista).
func platformIcon(png []byte) []byte { return pngToICO(png) }
