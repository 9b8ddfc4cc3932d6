package pyenv

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/sitepath"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

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
	w := &pthWalk{in: in, ip: newImportPath(in.env.Layout), known: map[string]bool{}, lines: map[string][]sitepath.Line{}}
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
	ip       *sitepath.Path[Site]
	known    map[string]bool            // site.py's known_paths
	added    int                        // folders path lines added
	editable []Site                     // packages editable finders map
	lines    map[string][]sitepath.Line // each site's lines, read once
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
		w.ip.Append(c)
	}
	if w.added > sitepath.MaxFolders {
		return
	}
	lines, ok := w.lines[c.Path]
	if !ok {
		lines = in.readPthFiles(c.Path)
		w.lines[c.Path] = lines
	}
	for _, l := range lines {
		switch {
		case l.Code != "" && again:
			if _, finder := sitepath.EditableFinder(l.Code); !finder {
				in.followCode(l, w.ip, false)
			}
			continue
		case l.Code != "":
			w.editable = append(w.editable, in.pthCode(l, w.ip)...)
			continue
		}
		k := in.siteKey(l.Path)
		if w.known[k] || !w.in.rd.isDir(l.Path) {
			continue // Python skips a path that does not exist, silently
		}
		if w.added == sitepath.MaxFolders {
			in.evidence(l.File, fmt.Sprintf("line %d and any later .pth file not followed: %d folders added by .pth files already", l.N, sitepath.MaxFolders))
			w.added++
			return
		}
		w.known[k] = true
		w.added++
		w.ip.Append(Site{Path: l.Path, From: SitePth, Pth: l.File, Line: l.N})
	}
}

// readPthFiles returns the path and import lines of site's .pth files,
// bounded; a .pth file that is not a regular file is a problem (Python
// blocks at start-up opening a FIFO one).
func (in *inspector) readPthFiles(site string) []sitepath.Line {
	ix, err := in.list(site)
	if err != nil {
		return nil // readSites reports a site it cannot list
	}
	var out []sitepath.Line
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
		if read == sitepath.MaxFiles {
			in.evidence(site, fmt.Sprintf("only the first %d .pth files of this folder were read; %s and any later ones were not", sitepath.MaxFiles, name))
			break
		}
		read++
		lines, truncated, err := sitepath.ReadPth(in.rd, file)
		if truncated {
			in.evidence(file, fmt.Sprintf("only its first %d lines (at most %d KiB) were read", sitepath.MaxLines, sitepath.MaxBytes>>10))
		}
		switch {
		case errors.Is(err, safefs.ErrNotRegular):
			if kind := in.rd.fileKind(file); kind != "a folder" { // Python skips a folder quietly
				pr := in.rd.problemFor(file, name, err)
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

// readImportNames are the import names whose packages GPU Canary reads:
// only these are taken from a finder's MAPPING.
var readImportNames = []string{"torch", "torchvision", "torchaudio", "llama_cpp", "bitsandbytes"}

// pthCode reads an import line of a .pth file: an editable finder's
// (sitepath.EditableFinder)
// MAPPING gives the package folders it serves; a line that moves folders
// on sys.path in a way GPU Canary can read is carried out on ip; any
// other line is remembered unread, to be said where it matters.
func (in *inspector) pthCode(l sitepath.Line, ip *sitepath.Path[Site]) []Site {
	mod, ok := sitepath.EditableFinder(l.Code)
	if !ok {
		if !in.followCode(l, ip, true) {
			in.unread = append(in.unread, l)
		}
		return nil
	}
	file := filepath.Join(filepath.Dir(l.File), mod+".py")
	data, err := in.rd.readSmall(file, smallFileLimit)
	if err == nil {
		var pairs [][2]string
		if pairs, err = sitepath.FinderMapping(data); err == nil {
			var out []Site
			for _, kv := range pairs {
				if slices.Contains(readImportNames, kv[0]) && filepath.IsAbs(kv[1]) && in.rd.isDir(kv[1]) {
					out = append(out, Site{Path: filepath.Clean(kv[1]), From: SiteEditable, Pth: l.File, Line: l.N, Package: kv[0]})
				}
			}
			return out
		}
	}
	if errors.Is(err, safefs.ErrNotRegular) {
		in.env.Problems = append(in.env.Problems, in.rd.problemFor(file, "the editable finder "+mod+".py", err))
	}
	in.unread = append(in.unread, l)
	in.evidence(file, fmt.Sprintf("the editable finder %s that line %d of %s installs was not read: %v", mod, l.N, filepath.Base(l.File), err))
	return nil
}
