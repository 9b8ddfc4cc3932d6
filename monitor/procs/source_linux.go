package procs

// newSource is the /proc reader.
func newSource(o Options) Source { return newScanner(o) }

var _ Source = (*scanner)(nil)
