package pyenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// recordLimit bounds a RECORD read: torch's lists about ten thousand
// files in a megabyte or two; one far larger is not read to its end.
const recordLimit = 32 << 20

// checkTorchFiles judges, by name, type and size only (a library is
// never read: they are gigabytes), the files `import torch` needs that
// a listing by name alone takes on trust: torch/__init__.py, the
// compiled core (_C) and the Python it was built for, the libraries of
// torch/lib, and whether version.py and the dist-info name the same
// torch. py is the X.Y the environment runs ("" when not known).
func checkTorchFiles(p *Package, sp *sitePackages, folder string, d *distInfo, vp *VersionPy, libs torchLibs, py string) {
	dir := sp.file(folder)
	sp.rd.initProblem(p, filepath.Join(dir, "__init__.py"))
	var record map[string]int64
	if d != nil && p.Installer != InstallerConda {
		// conda's own libraries are its package's, whatever a RECORD says
		record = sp.rd.recordSizes(filepath.Join(sp.distPath(*d), "RECORD"), "torch/lib/", "torch/_C")
	}
	sp.rd.libProblems(p, libs, record)
	missingLibProblem(p, libs, record)
	// torch/ is listed once, for its compiled core and the Python it is
	// built for both.
	ix, _ := sp.rd.listDir(dir) // nil when it cannot be listed: neither judges then
	coreProblem(p, dir, ix, record)
	if d == nil {
		abiProblem(p, dir, ix, "", py)
		return
	}
	abiProblem(p, dir, ix, filepath.Join(sp.distPath(*d), "WHEEL"), py)
	meta := "METADATA"
	if d.egg {
		meta = "PKG-INFO"
	}
	versionProblem(p, filepath.Join(sp.distPath(*d), meta), filepath.Join(dir, "version.py"), vp)
}

// initProblem: without torch/__init__.py, Python 3 imports torch as an
// empty namespace package (no error at import, none of torch after it).
func (rd *Reader) initProblem(p *Package, path string) {
	fi, err := rd.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		what := "is missing"
		if _, gone, lerr := rd.linkEnd(path); lerr == nil && gone != path {
			what = "is a link to " + gone + ", which does not exist"
		}
		p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: path,
			Message: "torch/__init__.py " + what + ": Python imports torch as an empty namespace package, so torch.tensor, torch.cuda and the rest are not there (AttributeError: module 'torch' has no attribute …); the install was half deleted; reinstall torch"})
	case err == nil && !fi.Mode().IsRegular():
		p.Problems = append(p.Problems, rd.problemFor(path, "torch/__init__.py", safefs.ErrNotRegular))
	}
}

// libFault is one library of torch/lib that cannot be loaded, and why.
type libFault struct{ name, why string }

// libProblems judges each library in torch/lib: a link that leads
// nowhere (conda-forge links torch/lib into $PREFIX/lib) is a
// half-deleted install; an empty library, one whose size is not the
// one RECORD gives, or one that is not a regular file is a damaged one.
// Either way the loader refuses it and import torch fails.
func (rd *Reader) libProblems(p *Package, libs torchLibs, record map[string]int64) {
	var dangling, damaged []libFault
	for _, e := range libs.entries {
		name := e.Name()
		if _, listed := record["torch/lib/"+name]; !listed && !importLoads(name) {
			continue
		}
		path := filepath.Join(libs.dir, name)
		if e.Type()&fs.ModeSymlink != 0 {
			end, gone, err := rd.linkEnd(path)
			switch {
			case errors.Is(err, errLinkLoop):
				dangling = append(dangling, libFault{name, "a loop of links"})
				continue
			case err != nil:
				continue
			case gone != "":
				dangling = append(dangling, libFault{name, "a link to " + gone + ", which does not exist"})
				continue
			}
			if why := rd.libFileFault(end, -1); why != "" {
				damaged = append(damaged, libFault{name, "a link to " + end + ", which is " + why})
			}
			continue
		}
		want, listed := record["torch/lib/"+name]
		if !listed {
			want = -1
		}
		if why := rd.libFileFault(path, want); why != "" {
			damaged = append(damaged, libFault{name, why})
		}
	}
	if len(dangling) > 0 {
		p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: faultPath(libs.dir, dangling),
			Message: fmt.Sprintf("torch/lib's %s: the libraries were deleted from under it, so the loader cannot open %s and import torch fails (OSError: … cannot open shared object file); reinstall torch",
				faultList(dangling), pronounOf(len(dangling)))})
	}
	if len(damaged) > 0 {
		p.Problems = append(p.Problems, Problem{Kind: ProblemDamagedFile, Path: faultPath(libs.dir, damaged),
			Message: fmt.Sprintf("torch/lib's %s: the loader refuses a library that is not whole, so import torch fails; reinstall torch",
				faultList(damaged))})
	}
}

// libFileFault says what is wrong with a library file (want: the size
// RECORD gives, -1 for none), "" when nothing is.
func (rd *Reader) libFileFault(path string, want int64) string {
	fi, err := rd.Stat(path)
	switch {
	case err != nil:
		return ""
	case !fi.Mode().IsRegular():
		if k := rd.fileKind(path); k != "" {
			return k + ", not a regular file"
		}
		return "not a regular file"
	case want >= 0 && fi.Size() == want: // what the wheel installed, even an empty file
	case fi.Size() == 0:
		return "empty (0 bytes)"
	case want >= 0:
		return fmt.Sprintf("%d bytes where its RECORD says %d (truncated or overwritten)", fi.Size(), want)
	}
	return ""
}

// coreLibs are the libraries of torch/lib that `import torch` loads on
// Linux and macOS (torch/_C's and libtorch's dependencies, and
// libtorch_global_deps, which torch/__init__.py loads itself), by stem.
// A distribution's torch/lib can hold links to others it packages
// apart (Debian's libcaffe2_*): those are not needed to import it.
var coreLibs = map[string]bool{
	"torch": true, "torch_cpu": true, "torch_python": true, "torch_global_deps": true, "shm": true, "c10": true,
	"torch_cuda": true, "torch_cuda_cpp": true, "torch_cuda_cu": true, "c10_cuda": true,
	"torch_hip": true, "c10_hip": true, "torch_xpu": true, "c10_xpu": true,
}

// importLoads reports whether import torch loads this torch/lib file
// wherever torch came from: a core library (coreLibs), or any DLL, since
// torch/__init__.py loads every DLL in torch/lib on Windows. The files a
// wheel's RECORD lists are checked besides (a wheel bundles only what
// its libraries need).
func importLoads(name string) bool {
	l := strings.ToLower(name)
	if strings.HasSuffix(l, ".dll") {
		return true
	}
	stem, ok := strings.CutPrefix(l, "lib")
	if !ok {
		return false
	}
	for _, ext := range []string{".so", ".dylib"} {
		if i := strings.Index(stem, ext); i > 0 && (len(stem) == i+len(ext) || stem[i+len(ext)] == '.') {
			return coreLibs[stem[:i]]
		}
	}
	return false
}

func faultList(fs []libFault) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.name + " is " + f.why
	}
	return strings.Join(parts, "; ")
}

// faultPath is the one library at fault, or torch/lib when several are.
func faultPath(dir string, fs []libFault) string {
	if len(fs) == 1 {
		return filepath.Join(dir, fs[0].name)
	}
	return dir
}

func pronounOf(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// recordSizes reads the sizes a RECORD gives (lines `path,sha256=…,size`)
// of the paths that start with one of prefixes. It streams at most recordLimit
// bytes; a RECORD it cannot read gives none. torch's RECORD is the
// longest of all (ten thousand lines), so what it gave is kept as a file
// fact (filefacts), with the shared libraries it lists for recordLibs:
// read once, it is only stat'ed after, until an install writes it anew.
func (rd *Reader) recordSizes(path string, prefixes ...string) map[string]int64 {
	kind := recordSizesFact + strings.Join(prefixes, "\x00")
	// The stamp is taken before the file is opened: a file replaced
	// after it is one whose next stamp differs, so read again.
	fi, err := rd.Stat(path)
	if err != nil {
		return nil
	}
	st := filefacts.Of(fi)
	if v, ok := rd.fact(kind, path, st); ok {
		return decodeSizes(v)
	}
	f, err := rd.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]int64{}
	var libs []string
	br := recordReaders.Get().(*bufio.Reader)
	defer recordReaders.Put(br)
	br.Reset(io.LimitReader(f, recordLimit))
	defer br.Reset(nil)
	pres := make([][]byte, len(prefixes))
	for i, pre := range prefixes {
		pres[i] = []byte(pre)
	}
	hasPrefix := func(line []byte) bool {
		for _, pre := range pres {
			if bytes.HasPrefix(line, pre) {
				return true
			}
		}
		return false
	}
	done := func() map[string]int64 {
		rd.keep(recordLibsFact, path, st, strings.Join(libs, "\x00"))
		rd.keep(kind, path, st, encodeSizes(out))
		return out
	}
	for {
		line, err := br.ReadSlice('\n')
		if p, ok := recordLib(line); ok {
			libs = append(libs, p)
		}
		if hasPrefix(line) {
			line = bytes.TrimRight(line, "\r\n")
			if i := bytes.LastIndexByte(line, ','); i > 0 {
				if n, perr := strconv.ParseInt(string(line[i+1:]), 10, 64); perr == nil {
					rest := line[:i]
					if j := bytes.LastIndexByte(rest, ','); j > 0 {
						out[string(rest[:j])] = n
					}
				}
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			// a line longer than the buffer: skip the rest of it
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return done()
			}
		case err != nil:
			return done()
		}
	}
}

// recordSizesFact is the kind of fact recordSizes keeps, followed by its
// prefixes: the sizes, as "path NUL size" pairs, NUL-separated.
const recordSizesFact = "record:sizes:"

func encodeSizes(m map[string]int64) string {
	var b strings.Builder
	for p, n := range m {
		if b.Len() > 0 {
			b.WriteByte(0)
		}
		b.WriteString(p)
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(n, 10))
	}
	return b.String()
}

func decodeSizes(v string) map[string]int64 {
	out := map[string]int64{}
	if v == "" {
		return out
	}
	parts := strings.Split(v, "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		if n, err := strconv.ParseInt(parts[i+1], 10, 64); err == nil {
			out[parts[i]] = n
		}
	}
	return out
}

// abiProblem: torch's compiled core is torch/_C.<tag>.so (.pyd), and
// Python loads only one whose tag is its own (cpython-311, cp311), so
// one built for another Python is "No module named 'torch._C'". The
// files decide; with no _C file at all the WHEEL's tags do.
func abiProblem(p *Package, dir string, ix *dirIndex, wheel, py string) {
	if py == "" || ix == nil {
		return
	}
	var others []string
	for _, e := range ix.entries {
		n := e.Name()
		if !strings.HasPrefix(n, "_C.") || !(strings.HasSuffix(n, ".so") || strings.HasSuffix(strings.ToLower(n), ".pyd")) {
			continue
		}
		v, tagged := extensionPython(n)
		if !tagged || v == py {
			return // one import can load
		}
		others = append(others, fmt.Sprintf("torch/%s is built for Python %s", n, v))
	}
	if len(others) > 0 {
		p.Problems = append(p.Problems, Problem{Kind: ProblemWrongPython, Path: dir,
			Message: fmt.Sprintf("%s, but the environment runs Python %s, which loads only a core built for it: import torch fails (No module named 'torch._C'); reinstall torch, which installs the wheel for Python %s",
				strings.Join(others, "; "), py, py)})
		return
	}
	if wheel == "" {
		return
	}
	tags, built := ix.rd.wheelPythons(wheel)
	if len(built) == 0 {
		return
	}
	for _, v := range built {
		if v == py {
			return
		}
	}
	p.Problems = append(p.Problems, Problem{Kind: ProblemWrongPython, Path: wheel,
		Message: fmt.Sprintf("torch's wheel is built for Python %s (WHEEL: Tag: %s), but the environment runs Python %s: its compiled core cannot be loaded and import torch fails; reinstall torch, which installs the wheel for Python %s",
			strings.Join(built, ", "), strings.Join(tags, ", "), py, py)})
}

// extensionPython reads the Python an extension module's file name is
// for: _C.cpython-311-x86_64-linux-gnu.so and _C.cpython-313t-….so
// (3.11, 3.13), _C.cp311-win_amd64.pyd (3.11). tagged is false for a
// name any CPython loads (_C.so, _C.abi3.so) or one it does not read.
func extensionPython(name string) (string, bool) {
	tag, _, _ := strings.Cut(strings.TrimPrefix(name, "_C."), ".")
	tag, _, _ = strings.Cut(tag, "-win")
	for _, pre := range []string{"cpython-", "cp"} {
		if rest, ok := strings.CutPrefix(tag, pre); ok {
			rest, _, _ = strings.Cut(rest, "-")
			rest = strings.TrimSuffix(rest, "t")
			if v := cpVersion(rest); v != "" {
				return v, true
			}
		}
	}
	return "", false
}

// cpVersion turns "311" into "3.11".
func cpVersion(digits string) string {
	if len(digits) < 2 || !isDigits(digits) {
		return ""
	}
	return digits[:1] + "." + digits[1:]
}

// wheelPythons reads a WHEEL file's Tag lines and the CPython versions
// they are built for; none when any tag is for every Python (py3,
// abi3) or the file cannot be read.
func (rd *Reader) wheelPythons(path string) (tags, versions []string) {
	data, err := rd.readSiteFile(path, 64<<10)
	if err != nil {
		return nil, nil
	}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "tag") {
			continue
		}
		tag := strings.TrimSpace(v)
		tags = append(tags, tag)
		pyTag, abi, _ := strings.Cut(tag, "-")
		abi, _, _ = strings.Cut(abi, "-")
		for _, one := range strings.Split(pyTag, ".") {
			rest, ok := strings.CutPrefix(one, "cp")
			ver := cpVersion(rest)
			if !ok || ver == "" || abi == "abi3" || abi == "none" {
				return tags, nil
			}
			versions = append(versions, ver)
		}
	}
	return tags, versions
}

// versionProblem compares torch/version.py's __version__ with the
// dist-info's METADATA Version. A PyPI Linux wheel's METADATA has no
// local tag while version.py has one (+cu124): that is how it is built.
// A different release is files of two installs mixed (an error: the
// compiled core and the Python code disagree); the same release with
// builds that differ where both name one (+cpu against cuda = '12.1') is
// metadata that pip and uv judge by while the files are another build.
func versionProblem(p *Package, metaPath, vpPath string, vp *VersionPy) {
	if vp == nil || p.DistVersion == "" || vp.Version == "" {
		return
	}
	meta := p.DistVersion
	metaRel, _, _ := strings.Cut(meta, "+")
	vpRel, _, _ := strings.Cut(vp.Version, "+")
	if !sameRelease(metaRel, vpRel) {
		p.Problems = append(p.Problems, Problem{Kind: ProblemMixedRelease, Path: metaPath,
			Message: fmt.Sprintf("%s says Version: %s but %s says __version__ = '%s': files of two torch releases are mixed (an overwrite that did not finish, or one forced over the other), so its compiled core and its Python code can disagree and import fails or misbehaves, and pip and uv judge it as %s; reinstall torch",
				metaPath, meta, vpPath, vp.Version, meta)})
		return
	}
	mb, md := classifyLocalTag(meta)
	if mb == BuildUnknown {
		return
	}
	vb, vd := classifyLocalTag(vp.Version)
	if vb == BuildUnknown {
		switch {
		case vp.CUDA != "":
			vb, vd = BuildCUDA, cudaMajorMinor(vp.CUDA)
		case vp.HIP != "":
			vb = BuildROCm
		case vp.XPU != "":
			vb = BuildXPU
		default:
			return // all None: CPU, or a 2.5 XPU build that wrote no xpu field
		}
	}
	if mb == vb && (mb != BuildCUDA || md == "" || vd == "" || md == vd) {
		return
	}
	p.Problems = append(p.Problems, Problem{Kind: ProblemBuildMismatch, Path: metaPath,
		Message: fmt.Sprintf("%s says Version: %s (%s) but %s says a %s: the files are one build while pip and uv judge them as the other, so a later install can keep the wrong one or replace the right one; reinstall torch",
			metaPath, meta, buildWords(mb, md), vpPath, buildWords(vb, vd))})
}

// sameRelease compares two public versions as PEP 440 does (2.5 is
// 2.5.0), as text when either is not one.
func sameRelease(a, b string) bool {
	c, err := pyspec.CompareVersions(a, b)
	if err != nil {
		return strings.EqualFold(a, b)
	}
	return c == 0
}

func buildWords(b Build, detail string) string {
	switch {
	case b == BuildCUDA && detail != "":
		return "CUDA " + detail + " build"
	case b == BuildCPU:
		return "CPU build"
	case b == BuildROCm:
		return "ROCm build"
	case b == BuildXPU:
		return "XPU build"
	}
	return string(b) + " build"
}
