package main

import (
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// kernelCacheVariable, set to "off", keeps the CUDA kernel cache and the
// file facts in memory only.
const kernelCacheVariable = "GPUCANARY_KERNEL_CACHE"

// kernelCache gives the CUDA libraries' kernel cache its file in the
// user's cache folder ($XDG_CACHE_HOME or ~/.cache, %LocalAppData% on
// Windows), so that each library's fat binary is read once and again
// only when it changes, across runs; and the file facts (which libraries
// carry no CUDA code, which libraries each RECORD lists) theirs.
func kernelCache() {
	dir, ok := cacheDir()
	if !ok {
		return
	}
	fatbin.Shared.SetFile(filepath.Join(dir, "cuda-kernels.json"))
	filefacts.Shared.SetDir(filepath.Join(dir, "file-facts"))
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
