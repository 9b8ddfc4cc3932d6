package pyenv

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
)

// exeReading is what the disk says about the program a venv runs.
type exeReading struct {
	path    string // the interpreter judged, or where it belongs
	missing string // why it cannot run, "" when the disk gives no reason
	python  string // the X.Y it runs, "" when the disk does not say
	says    string // the evidence for python
	file    string // the file that says it
}

// venvRecreate is how a venv whose interpreter is gone, or runs another
// Python than its packages were installed for, is made again over its
// packages (Env.Recreate).
type venvRecreate struct {
	kind   string   // ProblemInterpreterMissing or ProblemPythonMismatch
	why    string   // what is wrong, in one clause
	python string   // X.Y the packages were installed for
	remove []string // interpreter links `python -m venv` would keep as they are
}

// readInterpreter judges a venv's interpreter from the disk alone: the
// links of bin/python (Scripts\python.exe and pyvenv.cfg's home on
// Windows) and the installation they lead to. One that is gone (a
// dangling link after `uv python uninstall` or a pyenv or Homebrew
// upgrade, a copy whose installation was deleted, a Windows home that
// is gone) is a ProblemInterpreterMissing; one that now runs another
// X.Y (a base upgraded in place from 3.11 to 3.12) sets env.Python to
// what runs, reads the site-packages that Python searches, and is a
// ProblemPythonMismatch when the packages are in another's.
func (in *inspector) readInterpreter() {
	if in.env.Kind != KindVenv {
		return
	}
	var r exeReading
	if in.env.Layout == LayoutWindows {
		r = in.windowsExe()
	} else {
		r = in.posixExe()
	}
	if r.missing != "" {
		in.env.recreate = &venvRecreate{kind: ProblemInterpreterMissing, why: r.missing, python: in.env.Python, remove: in.rd.interpreterLinks(in.env)}
		in.env.Problems = append(in.env.Problems, Problem{Kind: ProblemInterpreterMissing, Path: r.path,
			Message: r.missing + ": nothing in this environment can run, import torch included, and no command that runs its Python (pip) can repair it. " + recreateWords(in.env)})
		return
	}
	if r.python == "" {
		return
	}
	if r.python != in.env.Python {
		in.evidence(r.file, r.says)
		in.env.Python = r.python
	}
	in.retarget(r)
}

// torchPython is the X.Y whose compiled modules import loads, for the
// check of torch's core: "" when the interpreter runs another Python
// than the folder read was installed for (that problem is said once, as
// ProblemPythonMismatch).
func (in *inspector) torchPython() string {
	for _, p := range in.env.Problems {
		if p.Kind == ProblemPythonMismatch {
			return ""
		}
	}
	return in.env.Python
}

// posixExe reads bin/python: a link is followed to the file it ends at,
// whose name (python3.12) says the Python it runs; a copy runs the Python
// pyvenv.cfg names, as long as the installation it came from is there.
func (in *inspector) posixExe() exeReading {
	bin := filepath.Join(in.env.Path, "bin")
	var r exeReading
	for _, n := range []string{"python", "python3", "python.exe"} { // python.exe: MSYS2's venvs
		_, err := in.rd.Lstat(filepath.Join(bin, n))
		if err == nil {
			r.path = filepath.Join(bin, n)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return r // bin/ cannot be looked into: nothing is claimed
		}
	}
	if r.path == "" {
		r.path = filepath.Join(bin, "python")
		r.missing = r.path + " does not exist: the environment's interpreter was deleted"
		return r
	}
	end, gone, err := in.rd.linkEnd(r.path)
	switch {
	case errors.Is(err, errLinkLoop):
		r.missing = r.path + " is a loop of links that never reaches a program"
		return r
	case err != nil:
		return r // not readable: nothing is claimed
	case gone != "":
		r.missing = fmt.Sprintf("%s is a link to %s, which does not exist", r.path, gone)
		return r
	case end != r.path:
		r.file = r.path
		if v := versionedName(filepath.Base(end)); v != "" {
			r.python, r.says = v, fmt.Sprintf("%s leads to %s: Python %s", r.path, end, v)
		} else if vs := in.rd.stdlibVersions(filepath.Dir(filepath.Dir(end))); len(vs) == 1 {
			r.python, r.says = vs[0], fmt.Sprintf("%s leads to %s, whose installation holds the standard library of Python %s only", r.path, end, vs[0])
		}
		return r
	}
	// A copy (venv --copies) of the Python that made the venv, which
	// wrote its version in pyvenv.cfg. It finds its standard library
	// through pyvenv.cfg's home, else where it was built to look (the
	// executable pyvenv.cfg names).
	cfgPy, cfgSays := pythonFromCfg(in.cfg)
	home, exe := in.cfg["home"], in.cfg["executable"]
	if in.rd.absent(home) && (exe == "" || in.rd.absent(exe)) {
		r.missing = fmt.Sprintf("%s is a copy of Python %s whose installation is gone (pyvenv.cfg's home, %s, does not exist): it finds no standard library and stops with \"No module named 'encodings'\"",
			r.path, orUnknown(cfgPy), home)
		return r
	}
	if cfgPy != "" {
		r.python, r.file = cfgPy, filepath.Join(in.env.Path, "pyvenv.cfg")
		r.says = fmt.Sprintf("%s is a copy of the Python that made the environment, pyvenv.cfg's %s", r.path, cfgSays)
	}
	return r
}

// windowsExe reads Scripts\python.exe, which since Python 3.7.2 is a
// launcher that starts python.exe in pyvenv.cfg's home: a home that is
// gone stops it with "No Python at '…'". home is judged only where it
// is a path of this system (not C:\… read from Linux).
func (in *inspector) windowsExe() exeReading {
	var r exeReading
	scripts := filepath.Join(in.env.Path, "Scripts")
	if name, ok := in.top.get("Scripts"); ok {
		scripts = filepath.Join(in.env.Path, name)
	}
	r.path = filepath.Join(scripts, "python.exe")
	if ix, err := in.rd.listDir(scripts); err == nil {
		if name, ok := ix.get("python.exe"); ok {
			r.path = filepath.Join(scripts, name)
		} else {
			r.missing = r.path + " does not exist: the environment's interpreter was deleted"
			return r
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		r.missing = r.path + " does not exist: the environment's interpreter was deleted"
		return r
	}
	home := in.cfg["home"]
	if home == "" || !filepath.IsAbs(home) {
		return r
	}
	ix, err := in.rd.listDir(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.missing = fmt.Sprintf("pyvenv.cfg's home, %s, does not exist: %s starts the python.exe installed there and stops with \"No Python at '%s'\"", home, r.path, filepath.Join(home, "python.exe"))
		return r
	case err != nil:
		return r
	}
	if _, ok := ix.get("python.exe"); !ok {
		r.missing = fmt.Sprintf("pyvenv.cfg's home, %s, has no python.exe: %s starts the one installed there and stops with \"No Python at '%s'\"", home, r.path, filepath.Join(home, "python.exe"))
		return r
	}
	if v := windowsPython(ix); v != "" {
		r.python, r.file = v, filepath.Join(in.env.Path, "pyvenv.cfg")
		r.says = fmt.Sprintf("home = %s holds the Python %s DLL: the interpreter runs Python %s", home, v, v)
	}
	return r
}

// retarget follows a venv's interpreter to the site-packages its Python
// X.Y searches (lib/pythonX.Y/site-packages: site.py names it by the
// running version, never by pyvenv.cfg). Packages in another version's
// folder are a ProblemPythonMismatch: that folder stays the one read
// when the running version has none, so torch is still shown with the
// reason it does not import; when it has one, a torch only in another
// version's folder is said.
func (in *inspector) retarget(r exeReading) {
	env := in.env
	sp := env.SitePackages
	if env.Layout == LayoutWindows || sp == "" {
		return
	}
	lib := filepath.Dir(filepath.Dir(sp))
	want := filepath.Join(lib, "python"+r.python, "site-packages")
	was := sitePython(sp)
	switch {
	case was == "":
		return
	case was != r.python && !in.rd.isDir(want):
		in.mismatch(sp, was, r, fmt.Sprintf("The environment's packages are in %s, for Python %s, but its interpreter is Python %s (%s), which never searches there (it looks for %s, which does not exist): import torch fails with \"No module named 'torch'\", as does every package installed there",
			sp, was, r.python, r.says, want))
		return
	case was != r.python:
		env.SitePackages, in.ownSites = want, []string{want}
	}
	if in.rd.isDir(filepath.Join(want, "torch")) {
		return
	}
	ix, err := in.rd.listDir(lib)
	if err != nil {
		return
	}
	for _, e := range ix.entries {
		other := filepath.Join(lib, e.Name(), "site-packages")
		if v := sitePython(other); v != "" && v != r.python && in.rd.isDir(filepath.Join(other, "torch")) {
			in.mismatch(other, v, r, fmt.Sprintf("torch is installed in %s, for Python %s, but the environment's interpreter is Python %s (%s), which searches %s instead: import torch fails there",
				other, v, r.python, r.says, want))
			return
		}
	}
}

// sitePython is the X.Y of a lib/pythonX.Y/site-packages folder.
func sitePython(site string) string {
	return versionedName(filepath.Base(filepath.Dir(site)))
}

// mismatch records a ProblemPythonMismatch about the site folder path,
// of Python was, when the interpreter read as r runs another: msg, and
// how to make the venv again for that Python.
func (in *inspector) mismatch(path, was string, r exeReading, msg string) {
	why := fmt.Sprintf("it runs Python %s (%s), but the packages in %s are installed for Python %s", r.python, r.says, path, was)
	in.env.recreate = &venvRecreate{kind: ProblemPythonMismatch, why: why, python: was, remove: in.rd.interpreterLinks(in.env)}
	in.env.Problems = append(in.env.Problems, Problem{Kind: ProblemPythonMismatch, Path: path, Message: msg + ". " + recreateWords(in.env)})
}

// recreateWords says how the environment is made again, keeping its
// packages: the Python they were installed for, over the folder, after
// its interpreter links are removed (`python -m venv` keeps a link that
// is already there, even a dangling one: checked with Python 3.11).
func recreateWords(env *Env) string {
	py := "python3"
	if env.recreate != nil && env.recreate.python != "" {
		py = "Python " + env.recreate.python
	}
	s := fmt.Sprintf("Make the environment again with %s over this folder (the fix command), which keeps the packages installed in it", py)
	if env.Installer == InstallerUV {
		s += "; in a uv project, `uv sync` makes it again too"
	}
	return s + "; if that Python is no longer installed, install it (uv python install, pyenv install), or make the environment with another Python and reinstall its packages"
}

// Recreate is how to make again, over its packages, a venv whose
// interpreter is missing or runs another Python than its packages were
// installed for, and why it must be: no command that runs the venv's
// own Python (pip, uv pip --python ENV) can repair it.
type Recreate struct {
	// Kind is the problem: ProblemInterpreterMissing or
	// ProblemPythonMismatch.
	Kind string
	// Why says what is wrong with the interpreter, in one clause
	// ("ENV/bin/python is a link to /x/python3.11, which does not exist").
	Why string
	// Remove are the interpreter links to remove first: `python -m venv`
	// keeps a link that is there, even a dangling one (checked with
	// Python 3.11).
	Remove []string
	// Create writes the interpreter and pyvenv.cfg anew with the Python
	// the packages were installed for (`python3.11 -m venv --without-pip
	// ENV`; `py -3.11 …` on Windows, whose venv copies python.exe over
	// the old one).
	Create []string
}

// Recreate says how to make the venv again; ok is false when the
// inspection found its interpreter able to run its packages.
func (e *Env) Recreate() (r Recreate, ok bool) {
	if e.recreate == nil {
		return Recreate{}, false
	}
	r = Recreate{Kind: e.recreate.kind, Why: e.recreate.why}
	py := e.recreate.python
	if e.Layout == LayoutWindows {
		r.Create = []string{"py"}
		if py != "" {
			r.Create = append(r.Create, "-"+py)
		}
		r.Create = append(r.Create, "-m", "venv", "--without-pip", e.Path)
		return r, true
	}
	exe := "python3"
	if py != "" {
		exe = "python" + py
	}
	r.Remove, r.Create = e.recreate.remove, []string{exe, "-m", "venv", "--without-pip", e.Path}
	return r, true
}

// Command is Remove and Create as one line a person can paste: `rm -f
// LINKS && CREATE`, each argv written by join (the caller's shell
// quoting; pyenv quotes nothing).
func (r Recreate) Command(join func([]string) string) string {
	cmd := join(r.Create)
	if len(r.Remove) > 0 {
		cmd = join(append([]string{"rm", "-f"}, r.Remove...)) + " && " + cmd
	}
	return cmd
}

// interpreterLinks lists a POSIX venv's interpreter entries that are
// links (bin/python, python3, python3.X), which `python -m venv` over
// the folder would keep pointing where they point.
func (rd *Reader) interpreterLinks(env *Env) []string {
	if env.Layout == LayoutWindows {
		return nil
	}
	bin := filepath.Join(env.Path, "bin")
	ix, err := rd.listDir(bin)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ix.entries {
		n := e.Name()
		if e.Type()&fs.ModeSymlink != 0 && interpreterName(n) {
			out = append(out, filepath.Join(bin, n))
		}
	}
	return out
}

// interpreterName reports whether name is one of the names venv, virtualenv
// and uv give a POSIX venv's interpreter: python, python3, python3.12,
// python3.13t.
func interpreterName(name string) bool {
	if name == "python" || name == "python3" {
		return true
	}
	v := versionedName(name)
	return v != "" && (name == "python"+v || name == "python"+v+"t")
}

// versionedName reads X.Y from an interpreter's file name: python3.12,
// python3.13t (free-threaded); "" for python, python3.
func versionedName(name string) string {
	rest, ok := strings.CutPrefix(strings.ToLower(name), "python")
	if !ok {
		return ""
	}
	return majorMinor(rest)
}

var errLinkLoop = errors.New("too many links")

// linkEnd follows the links from path as running it would: it returns the
// file they end at, or the first path in the chain that does not exist.
// A link's relative target is taken from the real folder it is in.
func (rd *Reader) linkEnd(path string) (end, missing string, err error) {
	p := path
	for range 40 {
		fi, err := rd.Lstat(p) // what is there; its target is read below
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return "", p, nil
		case err != nil:
			return "", "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			return p, "", nil
		}
		target, err := rd.Readlink(p)
		if err != nil {
			return "", "", err
		}
		if !filepath.IsAbs(target) {
			dir := filepath.Dir(p)
			if real, err := disk.EvalSymlinks(rd, dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		p = target
	}
	return "", "", errLinkLoop
}

// Absent reports whether path is an absolute path of this system that does
// not exist (not one that could not be looked at).
func Absent(path string) bool { return realReader.absent(path) }

// absent is Absent on the reader's disk.
func (rd *Reader) absent(path string) bool {
	if path == "" || !filepath.IsAbs(path) {
		return false
	}
	_, err := rd.Stat(path)
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func orUnknown(s string) string {
	if s == "" {
		return "(version not known)"
	}
	return s
}
