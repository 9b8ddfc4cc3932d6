//go:build windows

package instance

import "testing"

// TestWindowsClaimByMutex: the first start holds Local\GPUCanary-USER; a
// second start finds it, sets the first one's event, and is told it runs;
// once the first one ends, the next start is the tray.
func TestWindowsClaimByMutex(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, "claim", dir)
	claimSecond(t, c, dir, true, 0)
	claimSecond(t, c, dir, true, 0)
	c.stop()
	p, err := Claim(dir)
	if err != nil {
		t.Fatalf("Claim after the first start ended: %v", err)
	}
	p.Close()
}

// TestWindowsQuit: Quit sets the tray's -quit event and waits for its
// mutex to go (testQuit); the PID is not known on Windows.
func TestWindowsQuit(t *testing.T) {
	testQuit(t, func(*child) int { return 0 })
}
