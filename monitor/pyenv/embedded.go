package pyenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// KindEmbedded is Env.Kind of an embedded Python distribution: the
// "embeddable package" python.org ships for Windows (python.exe,
// pythonXY.dll, the standard library in pythonXY.zip, a pythonXY._pth
// file), which one-click apps ship instead of a venv: ComfyUI's portable
// build (python_embeded), Fooocus, the A1111 and Forge packages
// (system\python). It has no pyvenv.cfg, no conda-meta and no Lib\os.py;
// its packages are in Lib\site-packages and only its own pip, run as
// `python.exe -s -m pip`, installs into it.
const KindEmbedded = "embedded"

// InstallerEmbedded is the Name of the managers-table entry for embedded
// distributions: Env.Installer of one, whose pip is its own. It is
// exported for the managers package, whose reinstall rule for it is
// keyed by this name.
const InstallerEmbedded = "embedded"

// embeddedDist is what a folder's listing says about an embedded Python.
type embeddedDist struct {
	pth    string // the ._pth file that defines sys.path, "" when none
	python string // X.Y
}

// embeddedListing recognizes an embedded distribution from its top's
// entries: python.exe beside python3XY.dll, and the zipped standard
// library (python3XY.zip) or a ._pth file. CPython's getpath (Windows,
// PC/getpathp.c and Modules/getpath.py since 3.11) reads
// <dll-name>._pth, else <exe-name>._pth, beside the program.
func embeddedListing(names []string) (embeddedDist, bool) {
	has := func(n string) bool {
		return slices.ContainsFunc(names, func(m string) bool { return strings.EqualFold(m, n) })
	}
	if !has("python.exe") {
		return embeddedDist{}, false
	}
	for _, n := range names {
		l := strings.ToLower(n)
		minor, ok := strings.CutPrefix(l, "python3")
		if !ok || !strings.HasSuffix(minor, ".dll") {
			continue
		}
		minor = strings.TrimSuffix(minor, ".dll")
		if !isDigits(minor) {
			continue
		}
		d := embeddedDist{python: "3." + minor}
		stem := "python3" + minor
		for _, p := range []string{stem + "._pth", "python._pth"} {
			if i := slices.IndexFunc(names, func(m string) bool { return strings.EqualFold(m, p) }); i >= 0 {
				d.pth = names[i]
				return d, true
			}
		}
		if has(stem + ".zip") {
			return d, true
		}
	}
	return embeddedDist{}, false
}

// isEmbedded reports whether dir is an embedded Python distribution.
func (rd *Reader) isEmbedded(dir string) bool {
	if !rd.regularFile(filepath.Join(dir, "python.exe")) {
		return false // most folders asked: one stat, not a listing
	}
	ix, err := rd.listDir(dir)
	if err != nil {
		return false
	}
	_, ok := embeddedListing(ix.names())
	return ok
}

func (ix *dirIndex) names() []string {
	out := make([]string, len(ix.entries))
	for i, e := range ix.entries {
		out[i] = e.Name()
	}
	return out
}

// pthFile is what a ._pth file says: the folders that make sys.path, in
// order, each with its line, and whether `import site` turns on site's
// processing (Lib\site-packages and its .pth files).
type pthFile struct {
	paths      []pthPath
	importSite bool
}

type pthPath struct {
	path string // absolute
	line int
}

// parsePthFile reads a ._pth file as CPython does ("Finding modules" in
// the Windows docs): one path a line, relative to the file's folder;
// blank lines and lines starting with # are ignored; `import site` runs
// site. Other import lines are not allowed and are skipped. CPython
// reads the whole file, whatever its size (getpath's readlines), so it
// is read here as a stream, a line at a time: a line longer than any
// Windows path (maxPthLine) is no folder on it and is skipped, and at
// most maxPthPaths folders are kept.
func parsePthFile(path string, r io.Reader) (pthFile, error) {
	var f pthFile
	dir := filepath.Dir(path)
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readPthLine(br)
		l := strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case l == "import site":
			f.importSite = true
		case strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "import\t"):
		case len(f.paths) >= maxPthPaths:
		default:
			p := filepath.FromSlash(strings.ReplaceAll(l, `\`, "/"))
			if !filepath.IsAbs(p) && !isWindowsAbs(l) {
				p = filepath.Join(dir, p)
			}
			f.paths = append(f.paths, pthPath{path: filepath.Clean(p), line: n})
		}
		switch {
		case errors.Is(err, io.EOF):
			return f, nil
		case err != nil:
			return f, fmt.Errorf("reading %s: %w", path, err)
		}
	}
}

// Bounds of a ._pth file's reading: a line longer than Windows' longest
// path (32767 characters, UTF-8 at up to 3 bytes each) names no folder,
// and a ._pth with more folders than maxPthPaths is not one a person or
// an installer wrote.
const (
	maxPthLine  = 3 * 32767
	maxPthPaths = 10000
)

// readPthLine is the next line of br without its line ending; a line
// longer than maxPthLine is read to its end and given as "" (skipped).
func readPthLine(br *bufio.Reader) (string, error) {
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(long)+len(chunk) <= maxPthLine {
			long = append(long, chunk...)
		} else {
			long = long[:0:0]
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				return "", nil
			}
			return "", err
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return strings.TrimRight(string(long), "\r\n"), err
		}
	}
}

// readPthFile reads the ._pth file at path (parsePthFile).
func (rd *Reader) readPthFile(path string) (pthFile, error) {
	r, err := rd.Open(path)
	if err != nil {
		return pthFile{}, err
	}
	defer r.Close()
	return parsePthFile(path, r)
}

// isWindowsAbs reports whether p is a drive-letter path (C:\x), which a
// ._pth file on Windows may hold and which is never relative.
func isWindowsAbs(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// embedded fills the environment of an embedded distribution: its kind,
// layout, Python, owner (its own pip) and the sites import searches:
// the ._pth file's folders in its order, then, with `import site`,
// Lib\site-packages (site.getsitepackages on Windows). A ._pth file
// turns on isolated mode, so no user site; without one the interpreter
// starts as any Windows installation does, user site first.
func (in *inspector) embedded(o InspectOptions) bool {
	d, ok := embeddedListing(in.top.names())
	if !ok {
		return false
	}
	env, root := in.env, in.env.Path
	env.Kind, env.Layout, env.Python = KindEmbedded, LayoutWindows, d.python
	if m, ok := managerNamed(InstallerEmbedded); ok {
		in.owner = m
	}
	site := filepath.Join(root, "Lib", "site-packages")
	if sp, ok := in.top.isDir(root, "Lib"); ok {
		site = filepath.Join(root, sp, "site-packages")
	}
	if in.rd.isDir(site) {
		env.SitePackages = site
	}
	if d.pth == "" {
		in.evidence(filepath.Join(root, "python.exe"), "an embedded Python "+d.python+" (python.exe beside python3"+
			strings.TrimPrefix(d.python, "3.")+".dll and its zipped standard library), with no ._pth file")
		in.ownSites = []string{site}
		return true
	}
	pthPath := filepath.Join(root, d.pth)
	f, err := in.rd.readPthFile(pthPath)
	if err != nil {
		env.Problems = append(env.Problems, in.rd.problemFor(pthPath, d.pth, err))
		in.ownSites = []string{site}
		return true
	}
	says := "an embedded Python " + d.python + ": " + d.pth + " sets the import path"
	if f.importSite {
		says += "; its `import site` line adds Lib\\site-packages"
	} else {
		says += "; it has no `import site` line, so Lib\\site-packages is not on the import path"
	}
	in.evidence(pthPath, says)
	in.embeddedPth = &f
	if f.importSite {
		in.ownSites = []string{site}
	}
	return true
}

// embeddedSites is sys.path of an embedded distribution with a ._pth
// file: its folders (the zip and missing ones left out), then the site
// folders with the folders their .pth files add; no user site.
func (in *inspector) embeddedSites() []Site {
	f := in.embeddedPth
	pthPath := ""
	if name, ok := embeddedListing(in.top.names()); ok {
		pthPath = filepath.Join(in.env.Path, name.pth)
	}
	var sites []Site
	for _, p := range f.paths {
		if fi, err := in.rd.Stat(p.path); err != nil || !fi.IsDir() {
			continue
		}
		if slices.ContainsFunc(sites, func(s Site) bool { return in.rd.sameDir(s.Path, p.path) }) ||
			slices.ContainsFunc(in.ownSites, func(s string) bool { return in.rd.sameDir(s, p.path) }) {
			continue
		}
		if in.rd.sameDir(p.path, in.env.SitePackages) {
			// Lib\site-packages named by the file itself: still the
			// environment's own, where its pip installs
			sites = append(sites, Site{Path: p.path, From: SiteOwn})
			continue
		}
		sites = append(sites, Site{Path: p.path, From: SitePth, Pth: pthPath, Line: p.line})
	}
	var own []Site
	for _, s := range in.ownSites {
		if in.rd.isDir(s) {
			own = append(own, Site{Path: s, From: SiteOwn})
		}
	}
	if len(own) == 0 {
		return sites
	}
	return append(sites, in.withPth(own)...)
}
