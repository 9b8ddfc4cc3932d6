package pyenv

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/internal/sitepath"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// ErrNotEnv is wrapped by Inspect's error when a directory is no Python
// environment: no pyvenv.cfg, no conda-meta folder, no interpreter's
// standard library (lib/pythonX.Y/os.py, Lib\os.py) and not the user base.
var ErrNotEnv = errors.New("not a python environment: no pyvenv.cfg, conda-meta or lib/pythonX.Y")

// inspector holds one Inspect call's readings.
type inspector struct {
	rd       *Reader // every look at the disk goes to its Disk
	env      *Env
	top      *dirIndex
	cfg      map[string]string
	conda    *condaMeta
	owner    *Manager           // the first manager whose marker the environment has
	ownSites []string           // the environment's own site folders, existing or not, in sys.path order
	unread   []sitepath.Line    // .pth import lines GPU Canary did not follow
	listed   map[string]listing // site folders listed, by path
	// embeddedPth is an embedded distribution's ._pth file, read
	// (embedded.go): it, not site, makes the import path.
	embeddedPth *pthFile
}

// Inspect reads the environment at root from disk, with this process's
// user site. It returns an error only when root is not an environment or
// cannot be listed; anything wrong inside it is a Problem on the
// environment or on a package, so one broken file never hides the rest.
func Inspect(root string) (*Env, error) { return InspectWith(root, InspectOptions{}) }

// InspectWith is Inspect with the user whose user site Python would add
// named by o.
func InspectWith(root string, o InspectOptions) (*Env, error) { return realReader.Inspect(root, o) }

// Inspect is the package's Inspect on r's disk, keeping what it learns
// of files in r's stores; a nil Reader is the real disk, nothing kept.
func (r *Reader) Inspect(root string, o InspectOptions) (*Env, error) {
	rd := r.ready()
	o = o.withDefaults(rd)
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("inspect python environment %s: %w", root, err)
	}
	top, err := rd.listDir(abs)
	if err != nil {
		return nil, fmt.Errorf("inspect python environment %s: %w", abs, err)
	}
	present := map[string]string{} // marker name -> its name on disk
	for _, mk := range envMarkers {
		name, ok := top.get(mk.Name)
		if mk.Dir {
			name, ok = top.isDir(abs, mk.Name)
		}
		if ok {
			present[mk.Name] = name
		}
	}
	in := &inspector{
		rd:  rd,
		env: &Env{Path: abs, Layout: LayoutPOSIX, Installer: InstallerUnknown, Packages: map[string]*Package{}},
		top: top,
	}
	if len(present) == 0 && !in.prefix(o) {
		return nil, fmt.Errorf("inspect python environment %s: %w", abs, ErrNotEnv)
	}
	if name, ok := present["pyvenv.cfg"]; ok {
		in.readCfg(filepath.Join(abs, name))
	}
	if name, ok := present["conda-meta"]; ok {
		in.readConda(filepath.Join(abs, name))
	}
	if len(present) > 0 {
		in.findOwner(present)
		in.findSitePackages()
		in.pythonFallback()
		in.readInterpreter()
	}
	in.importSites(o)
	in.readSites()
	in.checkRuntime()
	in.installer()
	in.env.App = rd.appOf(abs)
	in.env.pip = in.pipState()
	return in.env, nil
}

func (in *inspector) evidence(file, says string) {
	in.env.Evidence = append(in.env.Evidence, Evidence{File: file, Says: says})
}

func (in *inspector) readCfg(path string) {
	data, err := in.rd.readSmall(path, smallFileLimit)
	if err != nil {
		pr := in.rd.problemFor(path, "pyvenv.cfg", err)
		if errors.Is(err, safefs.ErrNotRegular) {
			pr.Message += cfgNotRegular(in.rd.fileKind(path), in.env.Path)
		}
		in.env.Problems = append(in.env.Problems, pr)
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

// cfgNotRegular says, after "pyvenv.cfg is a FIFO, not a regular file:
// GPU Canary did not read it", what that means and what repairs it.
// Checked with Debian's Python 3.11: its interpreter blocks at start-up
// on a FIFO pyvenv.cfg; `python3 -m venv ENV` over the environment
// writes a new one and keeps site-packages.
func cfgNotRegular(kind, env string) string {
	s := ", so the environment's Python version and whether it sees the system's packages are not known"
	if kind == "a FIFO" {
		s += "; the environment's Python blocks at start-up opening it"
	}
	return s + "; delete it, then run `python3 -m venv " + env + "` with the Python that made the environment: it writes a new pyvenv.cfg and keeps the installed packages"
}

func (in *inspector) readConda(dir string) {
	ix, err := in.rd.listDir(dir)
	if err != nil {
		in.env.Problems = append(in.env.Problems, in.rd.problemFor(dir, "conda-meta", err))
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
		libIx, err := in.rd.listDir(libPath)
		if err != nil {
			in.env.Problems = append(in.env.Problems, in.rd.problemFor(libPath, lib, err))
			continue
		}
		if sp, ok := libIx.isDir(libPath, "site-packages"); ok {
			in.env.Layout = LayoutWindows
			in.env.SitePackages = filepath.Join(libPath, sp)
			in.ownSites = []string{in.env.SitePackages}
			return
		}
		if sp, dir := in.posixSitePackages(libPath, libIx); sp != "" {
			in.env.SitePackages = sp
			in.ownSites = []string{sp}
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
	if in.env.Kind != KindVenv {
		return
	}
	if path, kind := in.siteNotFolder(); path != "" {
		in.env.Problems = append(in.env.Problems, Problem{Kind: ProblemUnreadable, Path: path,
			Message: path + " is " + kind + ", not a folder: GPU Canary did not read it, and Python finds no packages there"})
		return
	}
	in.env.Problems = append(in.env.Problems, Problem{Kind: ProblemMalformed, Path: root,
		Message: "no site-packages folder (neither lib/pythonX.Y/site-packages nor Lib/site-packages)"})
}

// siteNotFolder finds where site-packages should be something that is
// not a folder (a FIFO lib, lib/python3.11/site-packages or
// Lib\site-packages), so that it is named as what it is, not as missing.
func (in *inspector) siteNotFolder() (string, string) {
	root := in.env.Path
	for _, libName := range []string{"lib", "lib64"} {
		lib, ok := in.top.get(libName)
		if !ok {
			continue
		}
		libPath := filepath.Join(root, lib)
		if kind := in.rd.fileKind(libPath); kind != "a folder" {
			if kind != "" {
				return libPath, kind
			}
			continue
		}
		libIx, err := in.rd.listDir(libPath)
		if err != nil {
			continue
		}
		cands := []string{"site-packages"}
		for _, e := range libIx.entries {
			if strings.HasPrefix(strings.ToLower(e.Name()), "python") {
				cands = append(cands, filepath.Join(e.Name(), "site-packages"))
			}
		}
		for _, c := range cands {
			if kind := in.rd.fileKind(filepath.Join(libPath, c)); kind != "" && kind != "a folder" {
				return filepath.Join(libPath, c), kind
			}
		}
	}
	return "", ""
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
		if fi, err := in.rd.Stat(sp); err == nil && fi.IsDir() {
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

// findOwner picks the first manager in the table whose marker the
// environment has (with pyvenv.cfg's key when the marker names one): it
// decides the environment's Kind, and its Name when it claims the env.
func (in *inspector) findOwner(present map[string]string) {
	for i := range managers {
		mk := managers[i].Marker
		if _, ok := present[mk.Name]; ok && (mk.CfgKey == "" || in.cfg[mk.CfgKey] != "") {
			in.owner = &managers[i]
			in.env.Kind = in.owner.Kind
			return
		}
	}
}

// installer names the environment's manager: the owner when its marker
// claims the environment (uv's pyvenv.cfg line, conda-meta), else the
// manager that torch's (or, by name, any read package's) INSTALLER file
// names among those that make this kind of environment.
func (in *inspector) installer() {
	env := in.env
	if in.owner != nil && in.owner.ClaimsEnv {
		env.Installer = in.owner.Name
		return
	}
	if t := env.Torch(); t != nil {
		if m, ok := installedBy(t.Installer, env.Kind); ok {
			env.Installer = m
			return
		}
	}
	names := make([]string, 0, len(env.Packages))
	for n := range env.Packages {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if m, ok := installedBy(env.Packages[n].Installer, env.Kind); ok {
			env.Installer = m
			return
		}
	}
}
