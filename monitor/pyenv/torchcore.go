package pyenv

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// missingLibProblem: a library the wheel's RECORD lists in torch/lib
// that is not there was deleted after pip installed it (libc10.so, which
// every other library links), and the loader fails on it at import. A
// listing shows only what is there, so the RECORD decides what is gone.
func missingLibProblem(p *Package, libs torchLibs, record map[string]int64) {
	if !libs.read || len(record) == 0 {
		return
	}
	have := make(map[string]bool, len(libs.entries))
	for _, e := range libs.entries {
		have[strings.ToLower(e.Name())] = true
	}
	var gone []libFault
	for path := range record {
		name, ok := strings.CutPrefix(path, "torch/lib/")
		if !ok || strings.Contains(name, "/") || !isLibraryName(name) || have[strings.ToLower(name)] {
			continue
		}
		gone = append(gone, libFault{name, "missing (torch's RECORD lists it)"})
	}
	if len(gone) == 0 {
		return
	}
	slices.SortFunc(gone, func(a, b libFault) int { return strings.Compare(a.name, b.name) })
	p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: faultPath(libs.dir, gone),
		Message: fmt.Sprintf("torch/lib's %s: libraries pip installed were deleted, so the loader cannot open %s and import torch fails (OSError: … cannot open shared object file); reinstall torch",
			faultList(gone), pronounOf(len(gone)))})
}

// isLibraryName reports whether a torch/lib file name is a shared
// library (libc10.so, libgomp.so.1, c10.dll, libc10.dylib).
func isLibraryName(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, ".dll") || strings.HasSuffix(l, ".dylib") || strings.HasSuffix(l, ".pyd") ||
		strings.HasSuffix(l, ".so") || strings.Contains(l, ".so.")
}

// isCoreName reports whether a file in torch/ is a compiled core:
// _C.<tag>.so or _C.<tag>.pyd (not _C_flatbuffer, not the _C folder of
// type stubs).
func isCoreName(name string) bool {
	l := strings.ToLower(name)
	return strings.HasPrefix(l, "_c.") && (strings.HasSuffix(l, ".so") || strings.HasSuffix(l, ".pyd"))
}

// coreProblem judges torch's compiled core, torch/_C.*.so (.pyd), by
// type and size as libProblems judges torch/lib: Python's import of an
// empty one, a FIFO or a dangling link fails (ImportError), as it does
// when the one the RECORD lists is gone.
func coreProblem(p *Package, dir string, ix *dirIndex, record map[string]int64) {
	if ix == nil {
		return
	}
	var gone, damaged []libFault
	have := map[string]bool{}
	for _, e := range ix.entries {
		name := e.Name()
		if !isCoreName(name) {
			continue
		}
		have[strings.ToLower(name)] = true
		path := filepath.Join(dir, name)
		if e.Type()&fs.ModeSymlink != 0 {
			end, missing, err := ix.rd.linkEnd(path)
			switch {
			case errors.Is(err, errLinkLoop):
				gone = append(gone, libFault{name, "a loop of links"})
			case err != nil:
			case missing != "":
				gone = append(gone, libFault{name, "a link to " + missing + ", which does not exist"})
			default:
				if why := ix.rd.libFileFault(end, -1); why != "" {
					damaged = append(damaged, libFault{name, "a link to " + end + ", which is " + why})
				}
			}
			continue
		}
		want, listed := record["torch/"+name]
		if !listed {
			want = -1
		}
		if why := ix.rd.libFileFault(path, want); why != "" {
			damaged = append(damaged, libFault{name, why})
		}
	}
	for path := range record {
		name, ok := strings.CutPrefix(path, "torch/")
		if ok && !strings.Contains(name, "/") && isCoreName(name) && !have[strings.ToLower(name)] {
			gone = append(gone, libFault{name, "missing (torch's RECORD lists it)"})
		}
	}
	slices.SortFunc(gone, func(a, b libFault) int { return strings.Compare(a.name, b.name) })
	if len(gone) > 0 {
		p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: faultPath(dir, gone),
			Message: fmt.Sprintf("torch's compiled core: %s, so import torch fails (ImportError: … torch._C); reinstall torch", faultList(gone))})
	}
	if len(damaged) > 0 {
		p.Problems = append(p.Problems, Problem{Kind: ProblemDamagedFile, Path: faultPath(dir, damaged),
			Message: fmt.Sprintf("torch's compiled core: %s: Python cannot load a core that is not whole, so import torch fails; reinstall torch", faultList(damaged))})
	}
}
