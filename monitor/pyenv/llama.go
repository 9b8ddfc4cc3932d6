package pyenv

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// llamaScanLimit bounds how much of a llama library is searched for the
// names of the GPU libraries it links: DT_NEEDED strings sit in .dynstr,
// near the start of an ELF file.
const llamaScanLimit = 4 << 20

// llamaLinkMarks are the library names whose appearance in libllama/libggml
// (layouts before 0.3.2, where every backend is inside one library) shows
// which GPU backend was compiled in.
var llamaLinkMarks = []struct{ backend, mark string }{
	{"cuda", "libcudart.so"}, {"cuda", "libcublas.so"}, {"cuda", "cudart64_"}, {"cuda", "cublas64_"},
	{"hip", "libamdhip64"}, {"hip", "amdhip64.dll"}, {"hip", "libhipblas"},
	{"vulkan", "libvulkan.so"}, {"vulkan", "vulkan-1.dll"},
	{"metal", "Metal.framework"},
}

// llamaBackends are the backends 0.3.2+ ships as separate ggml-NAME libraries.
var llamaBackends = []string{"cuda", "hip", "vulkan", "metal", "cpu", "sycl", "opencl"}

// readLlama reads llama-cpp-python in each historical layout:
// <= 0.2.79 llama_cpp/libllama.so; 0.2.80-0.3.1 llama_cpp/lib/libllama.so
// with libggml.so (the backend linked inside); 0.3.2+ one
// llama_cpp/lib/libggml-BACKEND library per backend.
func readLlama(sp *sitePackages) *Package {
	dists := sp.dists["llama-cpp-python"]
	folder, hasFolder := sp.ix.isDir(sp.path, "llama_cpp")
	if len(dists) == 0 && !hasFolder {
		return nil
	}
	p := &Package{Build: BuildUnknown}
	d := pickDist(p, sp, LlamaCppPython, dists, nil)
	if d != nil {
		readDist(p, sp, *d)
	} else {
		p.Problems = append(p.Problems, Problem{Kind: ProblemMissingDistInfo, Path: sp.file(folder),
			Message: "a llama_cpp folder with no dist-info; reinstall llama-cpp-python"})
	}
	p.Version = p.DistVersion
	if !hasFolder {
		p.Problems = append(p.Problems, llamaFolderMissing(p, sp.distPath(*d)))
		return p
	}
	pkgDir := sp.file(folder)
	backends := map[string]bool{}
	if libDir, ok := sp.rd.dirIfExists(pkgDir, "lib"); ok {
		if ix, err := sp.rd.listDir(libDir); err == nil {
			for _, e := range ix.entries {
				if b := ggmlBackend(e.Name()); b != "" {
					backends[b] = true
					p.Libs = append(p.Libs, e.Name())
					p.Evidence = append(p.Evidence, Evidence{File: filepath.Join(libDir, e.Name()), Says: "ggml " + b + " backend library"})
				}
			}
		} else {
			p.Problems = append(p.Problems, sp.rd.problemFor(libDir, "llama_cpp/lib", err))
		}
		if len(backends) == 0 {
			sp.rd.scanLlamaLibs(p, libDir, backends)
		}
	}
	if len(backends) == 0 {
		sp.rd.scanLlamaLibs(p, pkgDir, backends)
	}
	if len(backends) == 0 {
		p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: pkgDir,
			Message: "llama_cpp holds no libllama or ggml library; reinstall llama-cpp-python"})
		return p
	}
	for b := range backends {
		p.Backends = append(p.Backends, b)
	}
	slices.Sort(p.Backends)
	p.Build = BuildCPU
	switch {
	case backends["cuda"]:
		p.Build = BuildCUDA
	case backends["hip"]:
		p.Build = BuildROCm
	case backends["vulkan"] || backends["metal"]:
		p.Build = BuildUnknown
	}
	return p
}

// llamaFolderMissing is the problem of a llama-cpp-python dist-info with
// no llama_cpp folder beside it, so no library of it was found: the code
// of an editable install GPU Canary follows is read where it is
// (servedLater), so this is a half-deleted install, whose import fails,
// unless the dist-info says editable: scikit-build-core, which builds
// llama-cpp-python, maps its editable code by an import hook GPU Canary
// does not run, so there the library may well load from the checkout.
func llamaFolderMissing(p *Package, dist string) Problem {
	if p.Editable {
		return Problem{Kind: ProblemMalformed, Path: dist,
			Message: fmt.Sprintf("an editable install of %s whose llama_cpp folder GPU Canary did not find on the import path, so no libllama or ggml library was found and its backends are not known", cmp.Or(p.SourceDir(), p.DirectURL))}
	}
	return Problem{Kind: ProblemHalfDeleted, Path: dist,
		Message: "no llama_cpp folder beside its dist-info, so there is no libllama or ggml library and import llama_cpp fails; reinstall llama-cpp-python"}
}

// ggmlBackend returns "cuda" for libggml-cuda.so, ggml-cuda.dll,
// libggml-cpu-haswell.so ("cpu"), and "" for anything else.
func ggmlBackend(name string) string {
	l := strings.TrimPrefix(strings.ToLower(name), "lib")
	rest, ok := strings.CutPrefix(l, "ggml-")
	if !ok || !(strings.Contains(rest, ".so") || strings.HasSuffix(rest, ".dll") || strings.HasSuffix(rest, ".dylib")) {
		return ""
	}
	for _, b := range llamaBackends {
		if strings.HasPrefix(rest, b+".") || strings.HasPrefix(rest, b+"-") {
			return b
		}
	}
	return ""
}

// scanLlamaLibs searches the single-library layouts for linked GPU
// libraries; a library that is there always gives the CPU backend.
func (rd *Reader) scanLlamaLibs(p *Package, dir string, backends map[string]bool) {
	for _, n := range []string{"libggml.so", "libllama.so", "ggml.dll", "llama.dll", "libggml.dylib", "libllama.dylib"} {
		path := filepath.Join(dir, n)
		found, err := rd.scanFile(path)
		if err != nil {
			if !os.IsNotExist(err) {
				p.Problems = append(p.Problems, rd.problemFor(path, n, err))
			}
			continue
		}
		backends["cpu"] = true
		p.Libs = append(p.Libs, n)
		for _, b := range found {
			backends[b] = true
			p.Evidence = append(p.Evidence, Evidence{File: path, Says: "links the " + b + " runtime"})
		}
	}
}

// scanFile returns the backends whose link marks occur in the first
// llamaScanLimit bytes of path.
func (rd *Reader) scanFile(path string) ([]string, error) {
	f, err := rd.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const chunk = 64 << 10
	overlap := 0
	for _, m := range llamaLinkMarks {
		overlap = max(overlap, len(m.mark))
	}
	buf := make([]byte, chunk+overlap)
	var found []string
	r := io.LimitReader(f, llamaScanLimit)
	keep := 0
	for {
		n, err := io.ReadFull(r, buf[keep:])
		window := buf[:keep+n]
		for _, m := range llamaLinkMarks {
			if !slices.Contains(found, m.backend) && bytes.Contains(window, []byte(m.mark)) {
				found = append(found, m.backend)
			}
		}
		if err != nil {
			break
		}
		keep = min(overlap-1, len(window))
		copy(buf, window[len(window)-keep:])
	}
	return found, nil
}

// dirIfExists returns parent/name when it is a directory.
func (rd *Reader) dirIfExists(parent, name string) (string, bool) {
	p := filepath.Join(parent, name)
	fi, err := rd.Stat(p)
	return p, err == nil && fi.IsDir()
}
