package pyenv

import (
	"fmt"
	"path/filepath"
	"slices"
)

// importPath is sys.path as site.py builds it, step by step, so that an
// import line's sys.path.insert(0, …) or an easy_install block lands where
// Python puts it: the standard library's folders first (placeholders,
// From "": GPU Canary reads no packages there), then each folder in turn.
type importPath struct {
	entries []Site
	// plen and eggAt are setuptools' sys.__plen (-1 while unset) and
	// sys.__egginsert, which live on across .pth files as on sys.
	plen, eggAt int
}

// stdlibEntries is how many folders sys.path holds before site adds the
// first site: pythonXY.zip, pythonX.Y and lib-dynload on POSIX;
// pythonXY.zip, DLLs, Lib and the interpreter's folder on Windows.
func stdlibEntries(l Layout) int {
	if l == LayoutWindows {
		return 4
	}
	return 3
}

func newImportPath(l Layout) *importPath {
	return &importPath{entries: make([]Site, stdlibEntries(l)), plen: -1}
}

func (ip *importPath) append(s Site) { ip.entries = append(ip.entries, s) }

// insert is list.insert: a negative position counts from the end, and
// a position past either end is that end.
func (ip *importPath) insert(pos int, s Site) {
	n := len(ip.entries)
	if pos < 0 {
		pos = max(pos+n, 0)
	}
	ip.entries = slices.Insert(ip.entries, min(pos, n), s)
}

// eggMove is the easy_install block's last line: the folders added since
// sys.__plen go to sys.__egginsert, which moves on past them. It returns
// them and where they went; ok is false when sys.__plen was never set
// (Python's line fails, and the rest of its file is skipped).
func (ip *importPath) eggMove() (moved []Site, at int, ok bool) {
	if ip.plen < 0 || ip.plen > len(ip.entries) {
		return nil, 0, false
	}
	moved = slices.Clone(ip.entries[ip.plen:])
	ip.entries = ip.entries[:ip.plen]
	at = min(ip.eggAt, len(ip.entries))
	ip.entries = slices.Insert(ip.entries, at, moved...)
	ip.eggAt += len(moved)
	return moved, at, true
}

// sites is the import path's folders in order, each once (the first
// place wins, as for import), without the standard library and without
// folders an import line named that do not exist.
func (in *inspector) sites(ip *importPath) []Site {
	seen := map[string]bool{}
	var out []Site
	for _, s := range ip.entries {
		k := in.siteKey(s.Path)
		if s.From == "" || seen[k] || s.From == SitePth && !isDir(s.Path) {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

// followCode carries out on ip what an import line does to sys.path, as
// far as GPU Canary can tell (readPthCode); it reports false for a line
// it did not follow. With say, each line is said: as evidence when
// followed, in Env.PathCode when it changes the path by code GPU Canary
// does not follow.
func (in *inspector) followCode(l pthLine, ip *importPath, say bool) bool {
	e := readPthCode(l.code)
	evidence := func(file, says string) {
		if say {
			in.evidence(file, says)
		}
	}
	pathCode := func() bool {
		if say {
			in.env.PathCode = append(in.env.PathCode, Evidence{File: l.file, Says: pathCodeSays(l)})
		}
		return false
	}
	if e.pathCode {
		return pathCode()
	}
	if len(e.ops) == 0 {
		return false
	}
	for _, op := range e.ops {
		s := Site{Path: filepath.Clean(op.dir), From: SitePth, Pth: l.file, Line: l.n}
		switch op.kind {
		case opInsert:
			ip.insert(op.pos, s)
			evidence(l.file, fmt.Sprintf("line %d puts %s at position %d of sys.path (sys.path.insert)%s", l.n, s.Path, op.pos, frontWords(op.pos)))
		case opAppend:
			ip.append(s)
			evidence(l.file, fmt.Sprintf("line %d puts %s at the end of sys.path (sys.path.append)", l.n, s.Path))
		case opEggMark:
			ip.plen = len(ip.entries)
		case opEggMove:
			moved, at, ok := ip.eggMove()
			if !ok {
				return pathCode()
			}
			if len(moved) > 0 {
				evidence(l.file, fmt.Sprintf("line %d (setuptools' easy_install block) moves what this file's path lines added (%d folder%s) to position %d of sys.path%s", l.n, len(moved), plural(len(moved)), at, frontWords(at)))
			}
		}
	}
	return true
}

// frontWords says what a position at the front of sys.path means.
func frontWords(pos int) string {
	if pos == 0 {
		return ", before the standard library and every site-packages"
	}
	return ""
}

// pathCodeSays names an import line that changes the import path by
// code GPU Canary does not run.
func pathCodeSays(l pthLine) string {
	return fmt.Sprintf("line %d changes the import path by code GPU Canary does not run (%s)", l.n, shortCode(l.code))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
