package pyenv

import (
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// An egg folder that a .pth file puts on the import path
// (torch-2.5.1-py3.11-linux-x86_64.egg, as setuptools' easy_install and
// `setup.py install` left them) holds the package's import folder and
// its metadata in EGG-INFO/PKG-INFO; its name, NAME-VERSION-pyX.Y[-PLATFORM].egg,
// gives the distribution name and version (setuptools' pkg_resources
// EGG_NAME), with "-" in either written as "_".

// eggDist adds an egg folder's EGG-INFO to sp as the dist-info of the
// distribution its name gives; sp is left alone when it is no egg.
func eggDist(sp *sitePackages) {
	base := filepath.Base(sp.path)
	stem, ok := strings.CutSuffix(base, ".egg")
	if !ok {
		return
	}
	info, ok := sp.ix.isDir(sp.path, "EGG-INFO")
	if !ok {
		return
	}
	name, rest, _ := strings.Cut(stem, "-")
	version, _, _ := strings.Cut(rest, "-")
	if name == "" {
		return
	}
	key := pyspec.NormalizeName(name)
	sp.dists[key] = append(sp.dists[key], distInfo{dir: info, version: version, egg: true})
}
