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
	// shown is the menu on the desktop, entry by entry; a new menu of the
	// same shape (the usual case: a count in the status line changed)
	// updates these in place, so their ids stay valid for a menu the
	// user has open.
	shown []*shownItem
	// gen is closed when the menu is rebuilt: the goroutines waiting for
	// the old entries' clicks end.
	gen chan struct{}
}

// shownItem is one entry on the desktop and what a click on it does now.
type shownItem struct {
	mi       *systray.MenuItem // nil for a separator
	item     Item
	children []*shownItem
	mu       sync.Mutex // guards item.Action, replaced in place
}

func newSystrayHost() *systrayHost { return &systrayHost{gen: make(chan struct{})} }

func (h *systrayHost) SetIcon(png []byte)     { systray.SetIcon(platformIcon(png)) }
func (h *systrayHost) SetTooltip(text string) { systray.SetTooltip(platformTooltip(text)) }

// SetTitle sets the StatusNotifierItem's Title on Linux (Windows has no
// title: its notification area shows the tooltip).
func (h *systrayHost) SetTitle(text string) { systray.SetTitle(text) }

func (h *systrayHost) SetMenu(items []Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sameShape(h.shown, items) {
		update(h.shown, items)
		return
	}
	close(h.gen)
	h.gen = make(chan struct{})
	systray.ResetMenu()
	h.shown = h.add(items, nil)
}

// sameShape reports whether items has the entries of shown, separators
// and submenus in the same places.
func sameShape(shown []*shownItem, items []Item) bool {
	if len(shown) != len(items) {
		return false
	}
	for i, s := range shown {
		if (s.mi == nil) != (items[i].Label == "") || (s.item.Action == nil) != (items[i].Action == nil) ||
			!sameShape(s.children, items[i].Children) {
			return false
		}
	}
	return true
}

// update gives shown entries the labels, states and actions of items.
func update(shown []*shownItem, items []Item) {
	for i, s := range shown {
		it := items[i]
		if s.mi != nil {
			if it.Label != s.item.Label {
				s.mi.SetTitle(it.Label)
			}
			if it.Disabled != s.item.Disabled {
				if it.Disabled {
					s.mi.Disable()
				} else {
					s.mi.Enable()
				}
			}
		}
		s.mu.Lock()
		s.item = it
		s.mu.Unlock()
		update(s.children, it.Children)
	}
}

// add adds items under parent (nil: the top level).
func (h *systrayHost) add(items []Item, parent *systray.MenuItem) []*shownItem {
	out := make([]*shownItem, 0, len(items))
	for _, it := range items {
		s := &shownItem{item: it}
		out = append(out, s)
		if it.Label == "" {
			if parent == nil {
				systray.AddSeparator()
			} else {
				parent.AddSeparator()
			}
			continue
		}
		if parent == nil {
			s.mi = systray.AddMenuItem(it.Label, "")
		} else {
			s.mi = parent.AddSubMenuItem(it.Label, "")
		}
		if it.Disabled {
			s.mi.Disable()
		}
		s.children = h.add(it.Children, s.mi)
		if it.Action != nil {
			// systray drops a click nobody is waiting for: wait for each.
			go func(clicked <-chan struct{}, gen <-chan struct{}) {
				for {
					select {
					case <-clicked:
						s.mu.Lock()
						action := s.item.Action
						s.mu.Unlock()
						action()
					case <-gen:
						return
					}
				}
			}(s.mi.ClickedCh, h.gen)
		}
	}
	return out
}
