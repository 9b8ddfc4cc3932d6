//go:build !linux && !windows

package instance

import "context"

// Claim makes this process the session's tray with a lock in stateDir, or
// returns a *Running error when another start holds it.
func Claim(stateDir string) (*Primary, error) { return claimByLock(stateDir) }

// Quit says whether a tray holds the lock in stateDir: one that does
// cannot be asked to quit here (a *NotQuit error).
func Quit(ctx context.Context, stateDir string) (bool, error) { return quitByLock(stateDir) }
