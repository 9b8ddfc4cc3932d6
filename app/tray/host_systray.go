package tray

import (
	"sync"

	"fyne.io/systray"
)

// systrayHost puts the tray on the desktop with fyne.io/systray: DBus
// (StatusNotifierItem and dbusmenu) on Linux, the Win32 notification area
// on Windows. No GUI toolkit and no render loop are involved, so an idle
// tray costs nothing.
type systrayHost struct {
	mu sync.Mutex
	// gen is closed when the menu is replaced: the goroutines waiting for
	// the old items' clicks end.
	gen chan struct{}
}

func newSystrayHost() *systrayHost { return &systrayHost{gen: make(chan struct{})} }

func (h *systrayHost) SetIcon(png []byte)     { systray.SetIcon(platformIcon(png)) }
func (h *systrayHost) SetTooltip(text string) { systray.SetTooltip(text) }

func (h *systrayHost) SetMenu(items []Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.gen)
	h.gen = make(chan struct{})
	systray.ResetMenu()
	h.add(items, nil)
}

// add adds items under parent (nil: the top level).
func (h *systrayHost) add(items []Item, parent *systray.MenuItem) {
	for _, it := range items {
		if it.Label == "" {
			if parent == nil {
				systray.AddSeparator()
			} else {
				parent.AddSeparator()
			}
			continue
		}
		var mi *systray.MenuItem
		if parent == nil {
			mi = systray.AddMenuItem(it.Label, "")
		} else {
			mi = parent.AddSubMenuItem(it.Label, "")
		}
		if it.Disabled {
			mi.Disable()
		}
		if len(it.Children) > 0 {
			h.add(it.Children, mi)
		}
		if it.Action != nil {
			// systray drops a click nobody is waiting for: wait for each.
			go func(clicked <-chan struct{}, gen <-chan struct{}, action func()) {
				for {
					select {
					case <-clicked:
						action()
					case <-gen:
						return
					}
				}
			}(mi.ClickedCh, h.gen, it.Action)
		}
	}
}
