package pyenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNotEnv is wrapped by Inspect's error when a directory has neither a
// pyvenv.cfg nor a conda-meta folder.
var ErrNotEnv = errors.New("not a python environment: no pyvenv.cfg or conda-meta")

// inspector holds one Inspect call's readings.
type inspector struct {
	env   *Env
	top   *dirIndex
	cfg   map[string]string
	conda *condaMeta
}

// Inspect reads the environment at root from disk. It returns an error only
// when root is not an environment or cannot be listed; anything wrong inside
// it is a Problem on the environment or on a package, so one broken file
// never hides the rest.
func Inspect(root string) (*Env, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("inspect python environment %s: %w", root, err)
	}
	top, err := listDir(abs)
	if err != nil {
		return nil, fmt.Errorf("inspect python environment %s: %w", abs, err)
	}
	cfgName, hasCfg := top.get("pyvenv.cfg")
	condaName, hasConda := top.isDir(abs, "conda-meta")
	if !hasCfg && !hasConda {
		return nil, fmt.Errorf("inspect python environment %s: %w", abs, ErrNotEnv)
	}
	in := &inspector{
		env: &Env{Path: abs, Layout: LayoutPOSIX, Installer: InstallerUnknown, Packages: map[string]*Package{}},
		top: top,
	}
	if hasCfg {
		in.env.Kind = "venv"
		in.readCfg(filepath.Join(abs, cfgName))
	}
	if hasConda {
		in.env.Kind = "conda"
		in.readConda(filepath.Join(abs, condaName))
	}
	in.findSitePackages()
	in.pythonFallback()
	if in.env.SitePackages != "" {
		ix, err := listDir(in.env.SitePackages)
		if err != nil {
			in.env.Problems = append(in.env.Problems, problemFor(in.env.SitePackages, "site-packages", err))
		} else {
			in.readPackages(indexSitePackages(in.env.SitePackages, ix))
		}
	}
	in.installer()
	return in.env, nil
}

func (in *inspector) evidence(file, says string) {
	in.env.Evidence = append(in.env.Evidence, Evidence{File: file, Says: says})
}

func (in *inspector) readCfg(path string) {
	data, err := readSmall(path, smallFileLimit)
	if err != nil {
		in.env.Problems = append(in.env.Problems, problemFor(path, "pyvenv.cfg", err))
		return
	}
	in.cfg = ParsePyvenvCfg(data)
	if py, says := pythonFromCfg(in.cfg); py != "" {
		in.env.Python = py
		in.evidence(path, says)
	}
	if uv := in.cfg["uv"]; uv != "" {
		in.evidence(path, "uv = "+uv)
	}
}

func (in *inspector) readConda(dir string) {
	ix, err := listDir(dir)
	if err != nil {
		in.env.Problems = append(in.env.Problems, problemFor(dir, "conda-meta", err))
		return
	}
	cm := readCondaMeta(dir, ix)
	in.conda = &cm
}

// findSitePackages decides the layout: Windows keeps Lib\site-packages,
// POSIX lib/pythonX.Y/site-packages (or lib64/...).
func (in *inspector) findSitePackages() {
	root := in.env.Path
	for _, libName := range []string{"lib", "lib64"} {
		lib, ok := in.top.isDir(root, libName)
		if !ok {
			continue
		}
		libPath := filepath.Join(root, lib)
		libIx, err := listDir(libPath)
		if err != nil {
			in.env.Problems = append(in.env.Problems, problemFor(libPath, lib, err))
			continue
		}
		if sp, ok := libIx.isDir(libPath, "site-packages"); ok {
			in.env.Layout = LayoutWindows
			in.env.SitePackages = filepath.Join(libPath, sp)
			return
		}
		if sp, dir := in.posixSitePackages(libPath, libIx); sp != "" {
			in.env.SitePackages = sp
			if in.env.Python == "" {
				in.env.Python = majorMinor(strings.TrimPrefix(strings.ToLower(dir), "python"))
				in.evidence(filepath.Join(libPath, dir), "interpreter folder "+dir)
			}
			return
		}
	}
	if _, ok := in.top.isDir(root, "Scripts"); ok {
		in.env.Layout = LayoutWindows
	}
	if in.env.Kind == "venv" {
		in.env.Problems = append(in.env.Problems, Problem{Kind: ProblemMalformed, Path: root,
			Message: "no site-packages folder (neither lib/pythonX.Y/site-packages nor Lib/site-packages)"})
	}
}

// posixSitePackages picks lib/pythonX.Y/site-packages, preferring the
// version pyvenv.cfg names when several interpreters left folders behind.
func (in *inspector) posixSitePackages(libPath string, libIx *dirIndex) (string, string) {
	var dirs []string
	for _, e := range libIx.entries {
		n := e.Name()
		if strings.HasPrefix(strings.ToLower(n), "python") && majorMinor(n[len("python"):]) != "" {
			dirs = append(dirs, n)
		}
	}
	slices.SortFunc(dirs, func(a, b string) int {
		// the preferred version sorts last
		pa, pb := majorMinor(a[6:]) == in.env.Python, majorMinor(b[6:]) == in.env.Python
		switch {
		case pa != pb && pa:
			return 1
		case pa != pb:
			return -1
		}
		return strings.Compare(a, b)
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		sp := filepath.Join(libPath, dirs[i], "site-packages")
		if fi, err := os.Stat(sp); err == nil && fi.IsDir() {
			return sp, dirs[i]
		}
	}
	return "", ""
}

func (in *inspector) pythonFallback() {
	if in.env.Python != "" || in.conda == nil || in.conda.python == nil {
		return
	}
	r := in.conda.python
	in.env.Python = majorMinor(r.version)
	in.evidence(r.file, "conda python "+r.version)
}

// readPackages reads every package GPU Canary cares about from one
// site-packages listing.
func (in *inspector) readPackages(sp *sitePackages) {
	var condaTorch *condaRecord
	if in.conda != nil {
		condaTorch = in.conda.torch
	}
	add := func(name string, p *Package) {
		if p != nil {
			in.env.Packages[name] = p
		}
	}
	add(Torch, readTorch(sp, condaTorch))
	add(TorchVision, readCompanion(sp, TorchVision, "torchvision"))
	add(TorchAudio, readCompanion(sp, TorchAudio, "torchaudio"))
	add(LlamaCppPython, readLlama(sp))
	add(BitsAndBytes, readBNB(sp))
	for _, name := range sp.distNames() {
		if strings.HasPrefix(name, "nvidia-") {
			add(name, readNvidia(sp, name))
		}
	}
	sp.stashProblems(in.env)
}

// installer names the environment's manager: uv for uv-made venvs or a
// torch uv installed, conda for conda environments, else what torch's (or
// any read package's) INSTALLER file says.
func (in *inspector) installer() {
	env := in.env
	switch {
	case in.cfg["uv"] != "":
		env.Installer = InstallerUV
		return
	case in.conda != nil || env.Kind == "conda":
		env.Installer = InstallerConda
		return
	}
	if t := env.Torch(); t != nil && (t.Installer == InstallerUV || t.Installer == InstallerPip) {
		env.Installer = t.Installer
		return
	}
	names := make([]string, 0, len(env.Packages))
	for n := range env.Packages {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if i := env.Packages[n].Installer; i == InstallerUV || i == InstallerPip {
			env.Installer = i
			return
		}
	}
}
