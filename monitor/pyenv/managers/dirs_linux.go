package managers

// platformToolDirs: Linux keeps the XDG folders.
func platformToolDirs(w Where) toolDirs { return unixToolDirs(w) }

// normcase is Python's os.path.normcase: nothing on POSIX.
func normcase(p string) string { return p }

// casefold is how hatch keys a project's path: as it is on Linux.
func casefold(p string) string { return p }
