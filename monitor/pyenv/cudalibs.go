package pyenv

// Every CUDA library the environment's packages installed, found from
// each dist-info's RECORD (or, without one, the package's own folder),
// with the GPU architectures its fat binary carries (monitor/fatbin):
// what "no kernel image is available for execution on the device" is
// decided by, read before anything runs, for packages GPU Canary has
// never heard of too.

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// maxLibCandidates bounds the shared libraries looked at in one
// environment (each is a stat, and a read of its headers the first time).
const maxLibCandidates = 4000

// CUDALib is one CUDA library of a package and what it carries.
type CUDALib struct {
	// Package is the distribution that installed it (normalized name).
	Package string `json:"package"`
	// File is the library's path.
	File string `json:"file"`
	// Kernels is the summary `check` prints:
	// "sm_86 sm_89 sm_120 sm_121 · PTX 75 80 90".
	Kernels string   `json:"kernels,omitempty"`
	SASS    []string `json:"sass,omitempty"` // "sm_86", "sm_90a"
	PTX     []string `json:"ptx,omitempty"`  // "compute_75"
	// Runtime is the CUDA runtime it links ("libcudart.so.13").
	Runtime string `json:"cuda_runtime,omitempty"`
	// Error says why its fat binary could not be read; the other fields
	// are then empty.
	Error string `json:"error,omitempty"`
}

// Archs is what the library carries, for judging (fatbin.Kernels.Judge).
func (l CUDALib) Archs() fatbin.Kernels {
	var k fatbin.Kernels
	for _, s := range l.SASS {
		if a, ok := fatbin.ParseArch(s); ok {
			k.SASS = append(k.SASS, a)
		}
	}
	for _, s := range l.PTX {
		if a, ok := fatbin.ParseArch(s); ok {
			k.PTX = append(k.PTX, a)
		}
	}
	k.Runtime = l.Runtime
	return k
}

// libOf reads one library as a CUDALib of pkg; ok is false when it is no
// CUDA library (no fat binary, or not a library GPU Canary can read the
// headers of). Its kernels come from the reader's kernel cache, read
// again only when the library changes.
//
// A library this user may not read (mode 000, another user's 0600) is
// kept with its error: the dynamic loader could not read it either, so
// `import` fails with EACCES for this user, whatever the file carries.
func (rd *Reader) libOf(pkg, file string) (CUDALib, bool) {
	k, err := rd.kernels(file)
	l := CUDALib{Package: pkg, File: file}
	switch {
	case errors.Is(err, fatbin.ErrMalformed):
		l.Error = err.Error()
	case errors.Is(err, fs.ErrPermission):
		l.Error = unreadableByUser
	case err != nil:
		return l, false
	default:
		l.Kernels, l.SASS, l.PTX, l.Runtime = k.String(), k.SASSNames(), k.PTXNames(), k.Runtime
	}
	return l, true
}

// TorchCUDALib is torch's libtorch_cuda.so or torch_cuda.dll among the
// environment's CUDA libraries, nil when it has none (read).
func (e *Env) TorchCUDALib() *CUDALib {
	for i, l := range e.CUDALibs {
		if l.Package == Torch && isTorchCUDA(filepath.Base(l.File)) {
			return &e.CUDALibs[i]
		}
	}
	return nil
}

func isTorchCUDA(name string) bool {
	n := strings.ToLower(name)
	return n == "libtorch_cuda.so" || n == "torch_cuda.dll"
}

// KernelLines describes CUDA libraries for people, one line per package
// and arch list, the libraries of a package that carry the same ones
// together: "libggml-cuda.so (llama-cpp-python): sm_86 sm_89 sm_120
// sm_121 · PTX 75 80 90". check and the environments window show them.
func KernelLines(libs []CUDALib) []string {
	type line struct{ pkg, says string }
	var order []line
	names := map[line][]string{}
	for _, l := range libs {
		says := l.Kernels
		if l.Error != "" {
			says = "could not be read: " + l.Error
		}
		k := line{l.Package, says}
		if _, ok := names[k]; !ok {
			order = append(order, k)
		}
		names[k] = append(names[k], filepath.Base(l.File))
	}
	out := make([]string, len(order))
	for i, k := range order {
		files := names[k]
		list := strings.Join(files, ", ")
		if len(files) > 3 {
			list = fmt.Sprintf("%s and %d more", strings.Join(files[:2], ", "), len(files)-2)
		}
		out[i] = fmt.Sprintf("%s (%s): %s", list, k.pkg, k.says)
	}
	return out
}

// readCUDALibs lists every package's shared libraries, each package from
// the first site that holds it, and keeps the CUDA ones: torch's
// libtorch_cuda first, then torch's others, then by package and path.
func (in *inspector) readCUDALibs(sites []*sitePackages) {
	seen := map[string]bool{}
	var libs []CUDALib
	budget := maxLibCandidates
	for _, sp := range sites {
		for _, name := range sp.distNames() {
			if seen[name] {
				continue
			}
			seen[name] = true
			for _, file := range packageLibs(sp, name, sp.dists[name][0]) {
				if budget--; budget < 0 {
					break
				}
				l, ok := in.rd.libOf(name, file)
				if !ok {
					continue
				}
				libs = append(libs, l)
				if l.Error == unreadableByUser {
					in.unreadableLib(name, file)
				}
			}
		}
	}
	rank := func(l CUDALib) int {
		switch {
		case l.Package == Torch && isTorchCUDA(filepath.Base(l.File)):
			return 0
		case l.Package == Torch:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(libs, func(a, b CUDALib) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Package, b.Package), cmp.Compare(a.File, b.File))
	})
	in.env.CUDALibs = libs
}

// unreadableByUser is a CUDALib's Error when this user may not read it.
const unreadableByUser = "this user may not read it (permission denied)"

// unreadableLib says that a library of the package name cannot be read
// by this user: a problem of that package when the environment holds it
// as one (torch: TORCH_INSTALL_BROKEN's neighbour, ENV_UNREADABLE, an
// error), else of the environment.
func (in *inspector) unreadableLib(name, file string) {
	p := Problem{Kind: ProblemUnreadable, Path: file,
		Message: fmt.Sprintf("%s of %s cannot be read by this user (permission denied), so importing %s fails for this user with a permission error: ask its owner to make it readable (chmod a+r %s) or reinstall the package as its owner.",
			filepath.Base(file), name, name, file)}
	if pkg := in.env.Packages[name]; pkg != nil {
		pkg.Problems = append(pkg.Problems, p)
		return
	}
	in.env.Problems = append(in.env.Problems, p)
}

// packageLibs are the shared libraries a dist installed: its RECORD's
// *.so*, *.pyd and *.dll, or, without a RECORD (an egg-info, a conda
// package), those in its import folder and the folders below it.
func packageLibs(sp *sitePackages, name string, d distInfo) []string {
	base := filepath.Dir(sp.distPath(d))
	if rel, ok := sp.rd.recordLibs(filepath.Join(sp.distPath(d), "RECORD")); ok {
		out := make([]string, 0, len(rel))
		for _, r := range rel {
			out = append(out, filepath.Join(base, filepath.FromSlash(r)))
		}
		return out
	}
	var out []string
	root := sp.file(importName(name))
	if _, ok := sp.ix.isDir(sp.path, importName(name)); !ok {
		return nil
	}
	// A link in the import folder's place is not walked (filepath.WalkDir's rule).
	if fi, err := sp.rd.Lstat(root); err == nil && fi.IsDir() {
		sp.rd.libsUnder(root, 0, &out)
	}
	return out
}

// libsUnder adds to out the shared libraries in dir and in the folders
// below it down to libDepth, in lexical order, each listing recorded in
// t (a link to a folder is not followed, as filepath.WalkDir does not).
func (rd *Reader) libsUnder(dir string, depth int, out *[]string) {
	ents, _ := rd.ReadDir(dir) // what could be listed, as filepath.WalkDir goes on
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir() && depth < libDepth:
			rd.libsUnder(p, depth+1, out)
		case !e.IsDir() && isSharedLib(e.Name()):
			*out = append(*out, p)
		}
	}
}

// libDepth is how many folders below a package's import folder its
// libraries are looked for.
const libDepth = 2

// isSharedLib is true for libx.so, libx.so.12, x.pyd and x.dll.
func isSharedLib(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".so") || strings.Contains(n, ".so.") || strings.HasSuffix(n, ".pyd") || strings.HasSuffix(n, ".dll")
}

// recordReaders are the buffers RECORDs are read through: an environment
// has a RECORD per package, and a buffer each was most of what reading
// a thousand environments allocated.
var recordReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// recordPath is the path of a RECORD line (CSV: a path with a comma
// is quoted), "" for none.
func recordPath(line []byte) string {
	if len(line) > 0 && line[0] == '"' {
		rec, err := csv.NewReader(bytes.NewReader(line)).Read()
		if err != nil || len(rec) == 0 {
			return ""
		}
		return rec[0]
	}
	p, _, _ := bytes.Cut(line, []byte(","))
	return string(bytes.TrimRight(p, "\r\n"))
}

// recordLibs are the shared-library paths a RECORD lists, as written
// (relative to the site, slash-separated); ok is false when there is no
// RECORD to read.
func (rd *Reader) recordLibs(path string) ([]string, bool) {
	fi, err := rd.Stat(path)
	if err != nil {
		return nil, !errors.Is(err, os.ErrNotExist)
	}
	st := filefacts.Of(fi)
	if v, ok := rd.fact(recordLibsFact, path, st); ok {
		if v == "" {
			return nil, true
		}
		return strings.Split(v, "\x00"), true
	}
	libs, ok := rd.readRecordLibs(path)
	if ok {
		rd.keep(recordLibsFact, path, st, strings.Join(libs, "\x00"))
	}
	return libs, ok
}

// recordLibsFact is the fact filefacts keeps of a RECORD: the shared
// libraries it lists, NUL-separated (a path holds no NUL). pip and uv
// write a RECORD anew on every install, so an engine reading an
// environment again, or the next check, stats it instead.
const recordLibsFact = "record:libs"

// recordLib is the path of a RECORD line when it names a shared library
// (isSharedLib); only those are made strings.
func recordLib(line []byte) (string, bool) {
	if len(line) == 0 {
		return "", false
	}
	if line[0] != '"' {
		p, _, _ := bytes.Cut(line, []byte(","))
		p = bytes.TrimRight(p, "\r\n")
		if !isSharedLibBytes(p[bytes.LastIndexByte(p, '/')+1:]) {
			return "", false
		}
		return string(p), true
	}
	p := recordPath(line)
	return p, isSharedLib(p[strings.LastIndexByte(p, '/')+1:])
}

// isSharedLibBytes is isSharedLib on a name not yet made a string.
func isSharedLibBytes(name []byte) bool {
	if len(name) > 64 {
		return isSharedLib(string(name))
	}
	var low [64]byte
	n := low[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		n[i] = c
	}
	return bytes.HasSuffix(n, []byte(".so")) || bytes.Contains(n, []byte(".so.")) || bytes.HasSuffix(n, []byte(".pyd")) || bytes.HasSuffix(n, []byte(".dll"))
}

// smallRecord is the size under which a RECORD is read whole on the raw
// descriptor (safefs.ReadFile): most packages' are a few hundred bytes.
const smallRecord = 64 << 10

// readRecordLibs reads a RECORD for recordLibs.
func (rd *Reader) readRecordLibs(path string) ([]string, bool) {
	data, err := rd.ReadFile(path, smallRecord)
	switch {
	case err == nil:
		var out []string
		for len(data) > 0 {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i+1], data[i+1:]
			} else {
				data = nil
			}
			if p, ok := recordLib(line); ok {
				out = append(out, p)
			}
		}
		return out, true
	case !errors.Is(err, safefs.ErrTooLarge):
		return nil, !errors.Is(err, os.ErrNotExist)
	}
	f, err := rd.Open(path)
	if err != nil {
		return nil, !errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	var out []string
	br := recordReaders.Get().(*bufio.Reader)
	defer recordReaders.Put(br)
	br.Reset(io.LimitReader(f, recordLimit))
	defer br.Reset(nil)
	for {
		line, err := br.ReadSlice('\n')
		if p, ok := recordLib(line); ok {
			out = append(out, p)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return out, true
			}
		case err != nil:
			return out, true
		}
	}
}
