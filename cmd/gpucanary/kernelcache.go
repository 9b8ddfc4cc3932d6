package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// kernelCacheVariable, set to "off", keeps the file facts (the CUDA
// kernels each library carries among them) in memory only.
const kernelCacheVariable = "GPUCANARY_KERNEL_CACHE"

// fileFacts and cudaKernels are what this process's reads learned of
// files (which libraries each RECORD lists, a small site file's bytes,
// which libraries carry no CUDA code, a CUDA library's kernels), kept by
// each file's stamp in one store. The command line owns them: it gives
// the store its folder (kernelCache), hands both to every reader it
// makes (envReader) and flushes the store when main ends.
var (
	fileFacts   = &filefacts.Store{}
	cudaKernels = &fatbin.Cache{Facts: fileFacts}
)

// oldKernelCache is the file earlier versions kept the CUDA kernels in;
// they are file facts now, and the file is removed where it is found.
const oldKernelCache = "cuda-kernels.json"

// kernelCache gives the file facts (which libraries each RECORD lists,
// the CUDA kernels each library carries or that it carries none) their
// folder in the user's cache folder ($XDG_CACHE_HOME or ~/.cache,
// %LocalAppData% on Windows), so that each library's fat binary is read
// once and again only when it changes, across runs. A cache folder that
// another user owns or can write (a shared XDG_CACHE_HOME, a HOME in a
// shared temporary folder) is not used: its error says why, and the
// run goes on without a cache.
func kernelCache() error {
	dir, ok := cacheDir()
	if !ok {
		return nil
	}
	if err := fileFacts.UseDir(filepath.Join(dir, "file-facts")); err != nil {
		cacheRefused = err
		return err
	}
	os.Remove(filepath.Join(dir, oldKernelCache))
	return nil
}

// flushCaches writes what the run learned of files for the next run (the
// kernels are file facts too): a failed write costs only a read next time.
func flushCaches() { fileFacts.Flush() }

// envReader reads environments from the real disk with this process's
// stores.
func envReader() *pyenv.Reader {
	return &pyenv.Reader{Disk: pyenv.RealDisk, Facts: fileFacts, Kernels: cudaKernels}
}

// cacheWarning is what a run says, once, on the standard error, when
// the cache folder was not used.
func cacheWarning(err error) string {
	return fmt.Sprintf("gpucanary: warning: the cache folder was not used, and every file is read afresh: %v. "+
		"Make it yours and private (chown, chmod 700) or remove it, or set XDG_CACHE_HOME to a folder of your own; "+
		"%s=off keeps no cache and says nothing.", err, kernelCacheVariable)
}

// cacheRefused is why kernelCache did not use the cache folder: then
// nothing else keeps anything there either.
var cacheRefused error

// cacheDir is the programs' folder in the user's cache folder; false
// when nothing is to be kept on disk (GPUCANARY_KERNEL_CACHE=off), there
// is no cache folder, or it was refused (cacheRefused).
func cacheDir() (string, bool) {
	if os.Getenv(kernelCacheVariable) == "off" || cacheRefused != nil {
		return "", false
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, "gpucanary"), true
}
