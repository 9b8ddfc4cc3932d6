//go:build !windows

package shortcut

// StampStartMenu does nothing off Windows: the menu entry there is a
// .desktop file whose StartupWMClass already names the app.
func StampStartMenu(string) (bool, error) { return false, nil }
