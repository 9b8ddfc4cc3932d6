//go:build !windows

package managers

// platformAppRoots: on Linux the apps' folders are under home, which the
// home walk searches.
func platformAppRoots(Where) []Place { return nil }

// platformDrives: Linux has no drive letters.
func platformDrives() []string { return nil }
