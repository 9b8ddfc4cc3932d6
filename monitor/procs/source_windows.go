package procs

// newSource: the Windows scanner is not written yet (it will list
// processes with the Toolhelp snapshot and read each one's modules).
func newSource(Options) Source { return unsupported{} }
