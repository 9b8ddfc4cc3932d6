//go:build !linux && !windows

package instance

// Claim makes this process the session's tray with a lock in stateDir, or
// returns a *Running error when another start holds it.
func Claim(stateDir string) (*Primary, error) { return claimByLock(stateDir) }
