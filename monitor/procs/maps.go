package procs

import (
	"bufio"
	"bytes"
	"io"
	"path/filepath"
	"strings"
)

// ParseMaps streams the file paths mapped in a /proc/PID/maps file, each
// once, in the order first seen. Anonymous and special mappings ([heap],
// [stack], [vdso]) are skipped. It allocates only for new paths.
func ParseMaps(r io.Reader, fn func(path string)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var last []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: keep reading until its end.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if p := mapsPath(line); len(p) > 0 && !bytes.Equal(p, last) {
			last = append(last[:0], p...)
			fn(string(p))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
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

// Runtime kinds of a mapped library.
const (
	libTorchCPU  = "torch-cpu"
	libTorchCUDA = "torch-cuda"
	libTorchHIP  = "torch-hip"
	libCUDART    = "cudart"
	libCUDADrv   = "cuda-driver"
	libGGML      = "ggml"
	libGGMLCUDA  = "ggml-cuda"
	libGGMLGPU   = "ggml-gpu" // hip, vulkan, metal: a GPU, not NVIDIA's
	libONNXCUDA  = "onnx-cuda"
)

// runtimeLib says which ML runtime a mapped file is, by its base name, for
// Linux and Windows names alike. ok is false for everything else.
func runtimeLib(path string) (kind string, ok bool) {
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
	return "", false
}
