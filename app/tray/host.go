package tray

// Host is the desktop's tray: the StatusNotifierItem on Linux, the
// notification area on Windows (fyne.io/systray on both); tests record.
type Host interface {
	SetIcon(png []byte)
	// SetTitle names the item, in a tray host's list of items.
	SetTitle(text string)
	SetTooltip(text string)
	// SetMenu replaces the whole menu. Actions run on a goroutine of the
	// host's; they must return quickly.
	SetMenu(items []Item)
}

// Item is one menu entry. A zero Label is a separator.
type Item struct {
	Label    string
	Disabled bool
	Children []Item
	Action   func()
}

// Separator is a line between groups of entries.
var Separator = Item{}
