package pyenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// pickDist chooses the dist-info to read. Two or more are a problem: pip
// and uv each see only one of them, and uninstall leaves the other's files.
// The one matching version.py wins; otherwise the first by name.
func pickDist(p *Package, sp *sitePackages, name string, dists []distInfo, vp *VersionPy) *distInfo {
	switch len(dists) {
	case 0:
		return nil
	case 1:
		return &dists[0]
	}
	dirs := make([]string, len(dists))
	for i, d := range dists {
		dirs[i] = d.dir
	}
	p.Problems = append(p.Problems, Problem{Kind: ProblemDuplicateDistInfo, Path: sp.distPath(dists[0]),
		Message: fmt.Sprintf("%d %s metadata folders (%s): pip and uv see only one, and uninstalling leaves the other's files; reinstall %s", len(dists), name, strings.Join(dirs, ", "), name)})
	if vp != nil {
		public, _, _ := strings.Cut(vp.Version, "+")
		for i, d := range dists {
			if d.version == vp.Version || d.version == public {
				return &dists[i]
			}
		}
	}
	return &dists[0]
}

// readDist reads a dist-info's METADATA header, INSTALLER and
// direct_url.json into p.
func readDist(p *Package, sp *sitePackages, d distInfo) {
	dir := sp.distPath(d)
	p.DistInfo = dir
	p.DistVersion = d.version
	metaName := "METADATA"
	if d.egg {
		metaName = "PKG-INFO"
	}
	metaPath := dir + string(os.PathSeparator) + metaName
	m, err := sp.rd.readMetadataFile(metaPath)
	// What the folder is, asked only when its METADATA could not be read
	// (a FIFO or a file where the folder belongs fails that read too).
	if err != nil {
		if kind := sp.rd.fileKind(dir); kind != "" && kind != "a folder" {
			p.Problems = append(p.Problems, Problem{Kind: ProblemUnreadable, Path: dir,
				Message: dir + " is " + kind + ", not a folder: GPU Canary did not read it"})
			return
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.Problems = append(p.Problems, Problem{Kind: ProblemMalformed, Path: metaPath,
			Message: d.dir + " has no " + metaName + ": the install was interrupted"})
	case errors.Is(err, pyspec.ErrNoMetadataVersion) && m.Truncated:
		p.Problems = append(p.Problems, Problem{Kind: ProblemTruncated, Path: metaPath,
			Message: fmt.Sprintf("%s has no Version in its first %d bytes", metaName, pyspec.MetadataLimit)})
	case errors.Is(err, pyspec.ErrNoMetadataVersion):
		p.Problems = append(p.Problems, Problem{Kind: ProblemMalformed, Path: metaPath,
			Message: metaName + " has no Version header"})
	case err != nil:
		p.Problems = append(p.Problems, sp.rd.problemFor(metaPath, metaName, err))
	default:
		p.DistVersion, p.requires = m.Version, m.RequiresDist
		p.Evidence = append(p.Evidence, Evidence{File: metaPath, Says: "Version: " + m.Version})
	}
	instPath := dir + string(os.PathSeparator) + "INSTALLER"
	if data, err := sp.rd.readSiteFile(instPath, 4<<10); err == nil {
		p.Installer = strings.TrimSpace(string(data))
		p.Evidence = append(p.Evidence, Evidence{File: instPath, Says: fmt.Sprintf("INSTALLER %q", string(data))})
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.Problems = append(p.Problems, sp.rd.problemFor(instPath, "INSTALLER", err))
	}
	urlPath := dir + string(os.PathSeparator) + "direct_url.json"
	if data, err := sp.rd.readSmall(urlPath, smallFileLimit); err == nil {
		var du struct {
			URL     string `json:"url"`
			DirInfo struct {
				Editable bool `json:"editable"`
			} `json:"dir_info"`
		}
		if json.Unmarshal(data, &du) == nil && du.URL != "" {
			p.DirectURL = du.URL
			p.Evidence = append(p.Evidence, Evidence{File: urlPath, Says: "url: " + du.URL})
			if du.DirInfo.Editable {
				p.Editable = true
				p.Evidence = append(p.Evidence, Evidence{File: urlPath, Says: "dir_info: editable"})
			}
		}
	}
}

// readVersionPy reads a package's version.py, recording each field it says
// as evidence. A missing or unreadable file is a problem on p.
func (rd *Reader) readVersionPy(p *Package, path, pkg string) *VersionPy {
	data, err := rd.readSiteFile(path, smallFileLimit)
	if err != nil {
		// Missing, not a link that leads nowhere: asked only when the
		// read failed.
		if _, lerr := rd.Lstat(path); errors.Is(lerr, fs.ErrNotExist) {
			p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: path,
				Message: pkg + "/version.py is missing: files of the package were deleted; reinstall " + pkg})
			return nil
		}
		pr := rd.problemFor(path, pkg+"/version.py", err)
		if errors.Is(err, safefs.ErrNotRegular) {
			// Checked with Python 3.11 and pip 23: import fails with
			// "No module named 'torch.version'", and pip install
			// --force-reinstall replaces a FIFO or a socket version.py.
			pr.Message += fmt.Sprintf(", and Python does not load it either (import %s fails: No module named '%s.version'); reinstalling %s replaces it with the real file", pkg, pkg, pkg)
		}
		p.Problems = append(p.Problems, pr)
		return nil
	}
	vp, err := ParseVersionPy(data)
	if err != nil {
		p.Problems = append(p.Problems, Problem{Kind: ProblemMalformed, Path: path,
			Message: fmt.Sprintf("%s/version.py: %v", pkg, err)})
		return nil
	}
	p.Evidence = append(p.Evidence, Evidence{File: path, Says: fmt.Sprintf("__version__ = %q", vp.Version)})
	for _, f := range []struct{ name, val string }{{"cuda", vp.CUDA}, {"hip", vp.HIP}, {"xpu", vp.XPU}} {
		if f.val != "" {
			p.Evidence = append(p.Evidence, Evidence{File: path, Says: fmt.Sprintf("%s = %q", f.name, f.val)})
		}
	}
	return &vp
}
