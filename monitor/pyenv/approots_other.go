//go:build !windows

package pyenv

// platformAppRoots: on Linux the apps' folders are under home, which the
// home walk searches.
func platformAppRoots(Where) []Place { return nil }
