//go:build windows

package tray

import "github.com/gpucanary/gpucanary/app/present"

// showNote shows n as a toast (notify, in desktop_windows.go); a toast
// has no icon of its own to pick by the level.
func showNote(n present.Note) error { return notify(n.Title, n.Body) }
