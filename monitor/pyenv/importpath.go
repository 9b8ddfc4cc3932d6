package pyenv

import (
	"fmt"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/sitepath"
)

// newImportPath is sys.path before site adds the first site: the
// standard library's folders, placeholders (From "").
func newImportPath(l Layout) *sitepath.Path[Site] {
	return sitepath.NewPath[Site](sitepath.StdlibEntries(l == LayoutWindows))
}

// sites is the import path's folders in order, each once (the first
// place wins, as for import), without the standard library and without
// folders an import line named that do not exist.
func (in *inspector) sites(ip *sitepath.Path[Site]) []Site {
	seen := map[string]bool{}
	var out []Site
	for _, s := range ip.Entries {
		k := in.siteKey(s.Path)
		if s.From == "" || seen[k] || s.From == SitePth && !in.rd.isDir(s.Path) {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

// followCode carries out on ip what an import line does to sys.path, as
// far as GPU Canary can tell (sitepath.ReadCode); it reports false for a line
// it did not follow. With say, each line is said: as evidence when
// followed, in Env.PathCode when it changes the path by code GPU Canary
// does not follow.
func (in *inspector) followCode(l sitepath.Line, ip *sitepath.Path[Site], say bool) bool {
	e := sitepath.ReadCode(l.Code)
	evidence := func(file, says string) {
		if say {
			in.evidence(file, says)
		}
	}
	pathCode := func() bool {
		if say {
			in.env.PathCode = append(in.env.PathCode, Evidence{File: l.File, Says: pathCodeSays(l)})
		}
		return false
	}
	if e.PathCode {
		return pathCode()
	}
	if len(e.Ops) == 0 {
		return false
	}
	for _, op := range e.Ops {
		s := Site{Path: filepath.Clean(op.Dir), From: SitePth, Pth: l.File, Line: l.N}
		switch op.Kind {
		case sitepath.OpInsert:
			ip.Insert(op.Pos, s)
			evidence(l.File, fmt.Sprintf("line %d puts %s at position %d of sys.path (sys.path.insert)%s", l.N, s.Path, op.Pos, frontWords(op.Pos)))
		case sitepath.OpAppend:
			ip.Append(s)
			evidence(l.File, fmt.Sprintf("line %d puts %s at the end of sys.path (sys.path.append)", l.N, s.Path))
		case sitepath.OpEggMark:
			ip.MarkEggs()
		case sitepath.OpEggMove:
			moved, at, ok := ip.MoveEggs()
			if !ok {
				return pathCode()
			}
			if len(moved) > 0 {
				evidence(l.File, fmt.Sprintf("line %d (setuptools' easy_install block) moves what this file's path lines added (%d folder%s) to position %d of sys.path%s", l.N, len(moved), plural(len(moved)), at, frontWords(at)))
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
func pathCodeSays(l sitepath.Line) string {
	return fmt.Sprintf("line %d changes the import path by code GPU Canary does not run (%s)", l.N, shortCode(l.Code))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
