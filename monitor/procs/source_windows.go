package procs

// newSource is the Windows scanner (scan_windows.go).
func newSource(o Options) Source { return newWinScanner(o) }

var _ Source = (*winScanner)(nil)
