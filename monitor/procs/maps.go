package procs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// parseMaps calls fn with each mapped path, consecutive repeats (the
// segments of one file) collapsed. The slice is valid only during the call:
// the scanner converts to a string only the few paths it keeps.
func parseMaps(br *bufio.Reader, fn func(path []byte)) error {
	var last []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer (a path near PATH_MAX is
			// shorter than it): skip to its end.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if p := mapsPath(line); len(p) > 0 && !bytes.Equal(p, last) {
			last = append(last[:0], p...)
			fn(p)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading maps: %w", err)
		}
	}
}

// mapsPath is the pathname field of one maps line: the sixth field, which
// may contain spaces and may end in " (deleted)".
func mapsPath(line []byte) []byte {
	// address perms offset dev inode pathname
	field := 0
	i := 0
	for field < 5 && i < len(line) {
		for i < len(line) && line[i] != ' ' {
			i++
		}
		for i < len(line) && line[i] == ' ' {
			i++
		}
		field++
	}
	if field < 5 || i >= len(line) {
		return nil
	}
	p := bytes.TrimRight(line[i:], "\n")
	if len(p) == 0 || p[0] != '/' {
		return nil
	}
	return bytes.TrimSuffix(p, []byte(" (deleted)"))
}

// How often a process's libraries (maps on Linux, modules on Windows)
// are read again, when its address space has changed size: a known
// workload's runtimes rarely change, and any other process is looked at
// again within a fraction of JOB_ON_CPU's window. A busy browser changes
// its size on every refresh; its thousand-line maps are not worth reading
// each time.
const (
	mapsRefresh = 30 * time.Second
	mapsRecheck = 5 * time.Second
)

// libsDue reports whether a process's libraries are read on this scan:
// never read yet (readAt zero), or its address space has changed size
// since they were (sizeThen, sizeNow) and the wait for its kind is over.
func libsDue(readAt time.Time, sizeThen, sizeNow uint64, workload bool, now time.Time) bool {
	if readAt.IsZero() {
		return true
	}
	every := mapsRecheck
	if workload {
		every = mapsRefresh
	}
	return sizeNow != sizeThen && now.Sub(readAt) >= every
}

// libKind is the ML runtime a mapped library belongs to; a process's
// libraries OR together into one set.
type libKind uint16

const (
	libTorchCPU  libKind = 1 << iota // libtorch_cpu: any torch build
	libTorchCUDA                     // libtorch_cuda, libc10_cuda
	libTorchHIP                      // libtorch_hip, libc10_hip: ROCm
	libCUDART                        // libcudart, cudart64_*.dll
	libCUDADrv                       // libcuda.so.1, nvcuda.dll: the driver API
	libGGML                          // libggml*, libllama: llama.cpp
	libGGMLCUDA                      // libggml-cuda: llama.cpp's CUDA backend
	libGGMLGPU                       // hip, vulkan, metal: a GPU, not NVIDIA's
	libONNXCUDA                      // onnxruntime's CUDA provider
)

// cudaKinds are the libraries that mean a CUDA build is loaded.
const cudaKinds = libTorchCUDA | libGGMLCUDA | libONNXCUDA | libCUDART | libCUDADrv

// runtimeLib says which ML runtime a mapped file is, by its base name, for
// Linux and Windows names alike. ok is false for everything else.
func runtimeLib(path string) (kind libKind, ok bool) {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(path, `\`, "/")))
	name := strings.TrimPrefix(base, "lib")
	switch {
	case strings.HasPrefix(name, "torch_cuda") || strings.HasPrefix(name, "c10_cuda"):
		return libTorchCUDA, true
	case strings.HasPrefix(name, "torch_hip") || strings.HasPrefix(name, "c10_hip"):
		return libTorchHIP, true
	case strings.HasPrefix(name, "torch_cpu"):
		return libTorchCPU, true
	case strings.HasPrefix(name, "cudart"):
		return libCUDART, true
	case base == "libcuda.so.1" || base == "libcuda.so" || base == "nvcuda.dll":
		return libCUDADrv, true
	case strings.HasPrefix(name, "ggml-cuda") || strings.HasPrefix(name, "ggml_cuda"):
		return libGGMLCUDA, true
	case strings.HasPrefix(name, "ggml-hip") || strings.HasPrefix(name, "ggml-vulkan") || strings.HasPrefix(name, "ggml-metal"):
		return libGGMLGPU, true
	case strings.HasPrefix(name, "ggml") || strings.HasPrefix(name, "llama"):
		return libGGML, true
	case strings.HasPrefix(name, "onnxruntime_providers_cuda"):
		return libONNXCUDA, true
	}
	return 0, false
}

// setLibs sets p's GPULibs and LibPaths from the paths of the runtime
// libraries a process has loaded: each base name once (the first path
// seen), sorted by base name, so that LibPaths[i] is GPULibs[i]'s path.
func setLibs(p *Proc, paths []string) {
	libs := make([]string, 0, len(paths))
	kept := paths[:0]
	for _, path := range paths {
		if base := filepath.Base(path); !slices.Contains(libs, base) {
			libs = append(libs, base)
			kept = append(kept, path)
		}
	}
	slices.SortFunc(kept, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	for i, path := range kept {
		libs[i] = filepath.Base(path)
	}
	if len(kept) == 0 {
		libs, kept = nil, nil
	}
	p.GPULibs, p.LibPaths = libs, kept
}

// kindsOf is the set of runtimes among libs (base names).
func kindsOf(libs []string) libKind {
	var k libKind
	for _, l := range libs {
		kind, _ := runtimeLib(l)
		k |= kind
	}
	return k
}

// runtimeWords are in the base name of every file runtimeLib knows, in
// lower case: a path without one is not looked at further.
var runtimeWords = [][]byte{[]byte("torch"), []byte("c10"), []byte("cuda"), []byte("ggml"), []byte("llama")}

// mayBeRuntime is a cheap test, without allocating, that path's base name
// could be an ML runtime. Linux paths only: maps are read on Linux.
func mayBeRuntime(path []byte) bool {
	base := path[bytes.LastIndexByte(path, '/')+1:]
	for _, w := range runtimeWords {
		if bytes.Contains(base, w) {
			return true
		}
	}
	return false
}
