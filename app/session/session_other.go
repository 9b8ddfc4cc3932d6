//go:build !linux

package session

// ForTray: Windows and macOS always have their desktop's notification
// area and windows.
func ForTray(Getenv) error { return nil }

// ForWindows: Windows and macOS always have a desktop.
func ForWindows(Getenv) error { return nil }
