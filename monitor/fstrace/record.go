package fstrace

import (
	"os"
	"runtime"
)

// Record adds looks made before, in another trace (a memo's: a folder
// one pass found empty, looked in once for many reads), to t as if t had
// made them; the first look at a path stays. A reader that answers from
// a memo replays the memo's looks, so that its trace holds all its
// answer depends on.
func (t *Trace) Record(seen []Seen) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range seen {
		if _, ok := t.index[lookKey{s.Path, s.Look}]; !ok {
			t.add(s)
		}
	}
}

// UserHomeDir is os.UserHomeDir, the variable it reads (HOME,
// USERPROFILE) recorded as Getenv records one.
func (t *Trace) UserHomeDir() (string, error) {
	t.Getenv(os.Getenv)(homeVar())
	return os.UserHomeDir()
}

// homeVar is the variable os.UserHomeDir reads on this system.
func homeVar() string {
	switch runtime.GOOS {
	case "windows":
		return "USERPROFILE"
	case "plan9":
		return "home"
	}
	return "HOME"
}
