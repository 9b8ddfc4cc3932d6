//go:build windows

package tray

// platformIcon wraps png in an ICO container, the form the Windows
// notification area takes (ICO may hold PNG data since Windows Vista).
func platformIcon(png []byte) []byte { return pngToICO(png) }

// platformTooltip fits text in the notification area's tooltip, 128
// UTF-16 units with its terminating NUL (NOTIFYICONDATA's szTip), which
// systray fills without cutting: a longer text (the running jobs' lines)
// would lose its terminator.
func platformTooltip(text string) string { return cutUTF16(text, 127) }
