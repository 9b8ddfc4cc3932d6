// Package sitepath is Python's import path as the site module builds it,
// emulated without running Python: the order of sys.path (Path), the
// .pth files a site holds (ReadPth), the import lines among them that
// GPU Canary reads statically (ReadCode) and setuptools' editable finders
// (EditableFinder, FinderMapping). It knows nothing of environments:
// pyenv walks an environment's sites with it and says what each step
// did. It imports nothing of GPU Canary's but the readers' disk
// (monitor/pyenv/disk).
package sitepath

import "slices"

// Path is sys.path as site.py builds it, step by step, so that an import
// line's sys.path.insert(0, …) or an easy_install block lands where
// Python puts it. Its first StdlibEntries entries are the standard
// library's folders, left as zero values (placeholders: GPU Canary reads
// no packages there).
type Path[E any] struct {
	Entries []E
	// plen and eggAt are setuptools' sys.__plen (-1 while unset) and
	// sys.__egginsert, which live on across .pth files as on sys.
	plen, eggAt int
}

// StdlibEntries is how many folders sys.path holds before site adds the
// first site: pythonXY.zip, pythonX.Y and lib-dynload on POSIX;
// pythonXY.zip, DLLs, Lib and the interpreter's folder on Windows.
func StdlibEntries(windows bool) int {
	if windows {
		return 4
	}
	return 3
}

// NewPath is a sys.path holding only the standard library's stdlib
// placeholders.
func NewPath[E any](stdlib int) *Path[E] {
	return &Path[E]{Entries: make([]E, stdlib), plen: -1}
}

// Append is sys.path.append.
func (p *Path[E]) Append(e E) { p.Entries = append(p.Entries, e) }

// Insert is list.insert: a negative position counts from the end, and
// a position past either end is that end.
func (p *Path[E]) Insert(pos int, e E) {
	n := len(p.Entries)
	if pos < 0 {
		pos = max(pos+n, 0)
	}
	p.Entries = slices.Insert(p.Entries, min(pos, n), e)
}

// MarkEggs is the easy_install block's first line: sys.__plen =
// len(sys.path).
func (p *Path[E]) MarkEggs() { p.plen = len(p.Entries) }

// MoveEggs is the easy_install block's last line: the folders added since
// sys.__plen go to sys.__egginsert, which moves on past them. It returns
// them and where they went; ok is false when sys.__plen was never set
// (Python's line fails, and the rest of its file is skipped).
func (p *Path[E]) MoveEggs() (moved []E, at int, ok bool) {
	if p.plen < 0 || p.plen > len(p.Entries) {
		return nil, 0, false
	}
	moved = slices.Clone(p.Entries[p.plen:])
	p.Entries = p.Entries[:p.plen]
	at = min(p.eggAt, len(p.Entries))
	p.Entries = slices.Insert(p.Entries, at, moved...)
	p.eggAt += len(moved)
	return moved, at, true
}
