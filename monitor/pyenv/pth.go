package pyenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Bounds on reading .pth files. Python reads every .pth file of a site,
// whole; a broken or hostile site could hold thousands, or one huge
// file, and an inspection must stay milliseconds.
const (
	maxPthFiles   = 64        // .pth files read per site folder, in name order
	maxPthLines   = 1000      // lines read per .pth file
	maxPthBytes   = 256 << 10 // bytes read per .pth file
	maxPthFolders = 256       // folders .pth files add to one environment
)

// pthLine is one line of a .pth file that Python acts on.
type pthLine struct {
	file string // the .pth file
	n    int    // line number, from 1
	// path is a path line made absolute (relative to the site); code is
	// an import line as written, which Python executes.
	path, code string
}

// siteKey is how Python's site.makepath compares folders: the absolute
// path, case-folded on Windows (os.path.normcase).
func (in *inspector) siteKey(p string) string {
	if in.env.Layout == LayoutWindows {
		return strings.ToLower(p)
	}
	return p
}

// withPth adds the folders .pth files put on the import path, as
// CPython's site.addsitedir does for each site in turn: the site is
// appended unless already there, then each of its .pth files, in name
// order, appends every path line's folder that exists and is not on the
// path yet, and runs its import lines, of which GPU Canary follows those
// it can read (followCode: sys.path.insert and append of a literal
// folder, setuptools' easy_install block, which moves its eggs to the
// front). So a .pth file's folders come right after its site and before
// the next site unless an import line moves them; a site a .pth file
// already added keeps that place, and its own .pth files are still read
// when its turn comes. A venv's own site is added twice (site.venv, then
// site.main's addsitepackages, before the base interpreter's sites): its
// path lines are known the second time, but its import lines run again.
// The packages setuptools' editable finders map come last: the finder is
// appended to sys.meta_path, after the finder that searches sys.path.
func (in *inspector) withPth(calls []Site) []Site {
	w := &pthWalk{in: in, ip: newImportPath(in.env.Layout), known: map[string]bool{}, lines: map[string][]pthLine{}}
	again := in.env.Kind == KindVenv
	for _, c := range calls {
		if again && c.From == SiteBase {
			w.again(calls)
			again = false
		}
		w.site(c, false)
	}
	if again {
		w.again(calls)
	}
	return append(in.sites(w.ip), w.editable...)
}

// pthWalk is one walk of the sites' .pth files.
type pthWalk struct {
	in       *inspector
	ip       *importPath
	known    map[string]bool      // site.py's known_paths
	added    int                  // folders path lines added
	editable []Site               // packages editable finders map
	lines    map[string][]pthLine // each site's lines, read once
}

// again is site.main's second addsitedir of a venv's own sites.
func (w *pthWalk) again(calls []Site) {
	for _, c := range calls {
		if c.From == SiteOwn {
			w.site(c, true)
		}
	}
}

// site adds one site and carries out its .pth files; again is true for
// a second pass, which says nothing it said already.
func (w *pthWalk) site(c Site, again bool) {
	in := w.in
	if k := in.siteKey(c.Path); !w.known[k] {
		w.known[k] = true
		w.ip.append(c)
	}
	if w.added > maxPthFolders {
		return
	}
	lines, ok := w.lines[c.Path]
	if !ok {
		lines = in.readPthFiles(c.Path)
		w.lines[c.Path] = lines
	}
	for _, l := range lines {
		switch {
		case l.code != "" && again:
			if _, finder := editableFinder(l.code); !finder {
				in.followCode(l, w.ip, false)
			}
			continue
		case l.code != "":
			w.editable = append(w.editable, in.pthCode(l, w.ip)...)
			continue
		}
		k := in.siteKey(l.path)
		if w.known[k] || !isDir(l.path) {
			continue // Python skips a path that does not exist, silently
		}
		if w.added == maxPthFolders {
			in.evidence(l.file, fmt.Sprintf("line %d and any later .pth file not followed: %d folders added by .pth files already", l.n, maxPthFolders))
			w.added++
			return
		}
		w.known[k] = true
		w.added++
		w.ip.append(Site{Path: l.path, From: SitePth, Pth: l.file, Line: l.n})
	}
}

// readPthFiles returns the path and import lines of site's .pth files,
// bounded; a .pth file that is not a regular file is a problem (Python
// blocks at start-up opening a FIFO one).
func (in *inspector) readPthFiles(site string) []pthLine {
	ix, err := in.list(site)
	if err != nil {
		return nil // readSites reports a site it cannot list
	}
	var out []pthLine
	read := 0
	for _, e := range ix.entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".pth") {
			continue
		}
		file := filepath.Join(site, name)
		if strings.HasPrefix(name, ".") {
			in.evidence(file, "not read: newer Pythons (3.13) skip a .pth file whose name starts with '.'; older ones, Debian 12's 3.11.2 among them, read it")
			continue
		}
		if read == maxPthFiles {
			in.evidence(site, fmt.Sprintf("only the first %d .pth files of this folder were read; %s and any later ones were not", maxPthFiles, name))
			break
		}
		read++
		lines, truncated, err := readPth(file)
		if truncated {
			in.evidence(file, fmt.Sprintf("only its first %d lines (at most %d KiB) were read", maxPthLines, maxPthBytes>>10))
		}
		switch {
		case errors.Is(err, safefs.ErrNotRegular):
			if kind := fileKind(file); kind != "a folder" { // Python skips a folder quietly
				pr := problemFor(file, name, err)
				pr.Message += pthBlocks(kind) + "; delete it"
				in.env.Problems = append(in.env.Problems, pr)
			}
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			in.evidence(file, fmt.Sprintf("not read (%v): Python, unable to open it either, skips it", err))
		}
		out = append(out, lines...)
	}
	return out
}

// pthBlocks says what a non-regular .pth file does to Python.
func pthBlocks(kind string) string {
	if kind == "a FIFO" {
		return ", and Python, opening it at start-up, waits there for a writer forever"
	}
	return ""
}

// readPth reads the lines of one .pth file as site.addpackage does:
// lines starting with '#' and blank lines are skipped; lines starting
// with "import " or "import\t" are code; any other line, its trailing
// white space removed, is a path, relative to the file's folder unless
// absolute. At most maxPthBytes and maxPthLines are read; truncated says
// the file holds more.
func readPth(file string) (lines []pthLine, truncated bool, err error) {
	f, err := safefs.Open(file)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPthBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > maxPthBytes {
		// the last line may be cut: keep whole lines only
		data, truncated = data[:bytes.LastIndexAny(data[:maxPthBytes], "\r\n")+1], true
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // utf-8-sig
	site := filepath.Dir(file)
	all := universalLines(string(data))
	if len(all) > maxPthLines {
		all, truncated = all[:maxPthLines], true
	}
	for i, line := range all {
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import\t"):
			lines = append(lines, pthLine{file: file, n: i + 1, code: line})
		default:
			p := strings.TrimRightFunc(line, unicode.IsSpace)
			if !filepath.IsAbs(p) {
				p = filepath.Join(site, p)
			}
			lines = append(lines, pthLine{file: file, n: i + 1, path: filepath.Clean(p)})
		}
	}
	return lines, truncated, nil
}

// universalLines splits text at "\n", "\r\n" and "\r", as Python's text
// files read it.
func universalLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
