package main

import (
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// kernelCacheVariable, set to "off", keeps the CUDA kernel cache and the
// file facts in memory only.
const kernelCacheVariable = "GPUCANARY_KERNEL_CACHE"

// fileFacts and cudaKernels are what this process's reads learned of
// files (which libraries each RECORD lists, a small site file's bytes,
// which libraries carry no CUDA code, a CUDA library's kernels), kept by
// each file's stamp. The command line owns them: it gives them their
// files (kernelCache), hands them to every reader it makes (envReader)
// and flushes them when main ends.
var (
	fileFacts   = &filefacts.Store{}
	cudaKernels = &fatbin.Cache{Facts: fileFacts}
)

// kernelCache gives the CUDA libraries' kernel cache its file in the
// user's cache folder ($XDG_CACHE_HOME or ~/.cache, %LocalAppData% on
// Windows), so that each library's fat binary is read once and again
// only when it changes, across runs; and the file facts theirs.
func kernelCache() {
	dir, ok := cacheDir()
	if !ok {
		return
	}
	cudaKernels.SetFile(filepath.Join(dir, "cuda-kernels.json"))
	fileFacts.SetDir(filepath.Join(dir, "file-facts"))
}

// flushCaches writes what the run learned of files for the next run: a
// failed write costs only a read next time.
func flushCaches() {
	cudaKernels.Flush()
	fileFacts.Flush()
}

// envReader reads environments from the real disk with this process's
// stores.
func envReader() *pyenv.Reader {
	return &pyenv.Reader{Disk: pyenv.RealDisk, Facts: fileFacts, Kernels: cudaKernels}
}

// cacheDir is the programs' folder in the user's cache folder; false
// when nothing is to be kept on disk (GPUCANARY_KERNEL_CACHE=off) or
// there is no cache folder.
func cacheDir() (string, bool) {
	if os.Getenv(kernelCacheVariable) == "off" {
		return "", false
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, "gpucanary"), true
}
